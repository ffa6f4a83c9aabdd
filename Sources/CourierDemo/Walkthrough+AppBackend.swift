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
        let plain = NetworkClient(configuration: .init(baseURL: base))
        let events = SessionEvents()
        let watcher = Task { for await event in events.updates() { print("   session event: \(event)") } }
        let client = NetworkClient(
            configuration: .init(
                baseURL: base,
                interceptors: [
                    .retry(),
                    .reLogin(codes: [99, 500], events: events) {
                        print("   logging in again…")
                        _ = try await plain.send(Endpoint<String>.post("login"))
                    },
                    .token(store: InMemoryTokenStore()) {
                        print("   fetching a token (none stored yet)…")
                        struct Token: Decodable, Sendable { let token: String }
                        return try await plain.send(Endpoint<Token>.post("token").skipping(.token)).token
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
