import Courier
import CourierTesting
import Foundation

/// Prints log lines indented under the walkthrough's step.
struct IndentedLogSink: LogSink {
    func write(_ entry: LogEntry) { print("     log \(entry.line)") }
}

extension Walkthrough {
    /// Step 8: the app-backend chain — token, common parameters, signature, re-login, redacted log.
    func appBackend() async {
        heading("8. The app-backend chain: token, common parameters, signing, re-login, redacted log")
        let base = server.baseURL.appendingPathComponent("api/v1/")
        let events = SessionEvents()
        let watcher = Task { for await event in events.updates() { print("   session event: \(event)") } }
        // One client: the token fetch and the re-login send through it, with their own layers skipped.
        let client = NetworkClient(
            configuration: .init(
                baseURL: base,
                interceptors: [
                    .retry(),
                    .reLogin(codes: [99, 500], events: events) { login in
                        print("   the server answered code \(login.businessCode ?? 0): logging in again…")
                        _ = try await login.client.send(Endpoint<String>.post("login"))
                    },
                    .token(store: InMemoryTokenStore()) { refresh in
                        print("   fetching a token (none stored yet)…")
                        struct Token: Decodable, Sendable { let token: String }
                        return Credential(
                            accessToken: try await refresh.client.send(Endpoint<Token>.post("token")).token)
                    },
                    .headers(["phone_type": "app_iOS"]),
                    .commonParameters(["version": "3.2.0", "os": "2", "deviceId": "demo-device"]),
                    .signing(.hmacSHA256(secret: DemoBackend.signingKey)),
                    .logging(sink: IndentedLogSink()),
                ]))
        await step {
            let profile = try await client.send(Endpoint<[String: String]>.get("me"))
            print("   → \(profile["name"] ?? "?"), signature \(profile["signature"] ?? "?")")
        }
        watcher.cancel()
    }
}
