import Courier
import CourierTesting
import Foundation

/// Prints log lines indented under the walkthrough's step.
struct IndentedLogSink: LogSink {
    func write(_ entry: LogEntry) { print("     log \(entry.line)") }
}

/// What the demo backend's login answers.
struct DemoLogin: Decodable, Sendable {
    let token: String
    let userID: String

    /// The login endpoint, with the account the demo signs in as.
    static let endpoint = Endpoint<DemoLogin>.post(
        "login", body: .form(["user": "ann", "password": "demo-password"]))
}

extension Walkthrough {
    /// Step 8: the session and the app-backend chain — a login, the token on every request,
    /// common parameters, a signature, a silent login when the server forgot the session, a
    /// redacted log, and the logout.
    func appBackend() async {
        heading("8. The session: log in, token, common parameters, signing, a silent login, redacted log, log out")
        let base = server.baseURL.appendingPathComponent("api/v1/")
        // The session logs in again by itself when the backend answers 99, through the same
        // client (its request skips the session's own layer).
        let session = Session(
            logInCodes: [99],
            logIn: { login in
                print("   the server answered code \(login.businessCode ?? 0): logging in again without the user…")
                let answer = try await login.client.send(DemoLogin.endpoint)
                return Credential(accessToken: answer.token, userID: answer.userID)
            })
        let watcher = Task { for await event in session.events() { print("   session event: \(event)") } }
        let client = NetworkClient(
            configuration: .init(
                baseURL: base, session: session,
                interceptors: [
                    .retry(),
                    .headers(["phone_type": "app_iOS"]),
                    .commonParameters(["version": "3.2.0", "os": "2", "deviceId": "demo-device"]),
                    .signing(.hmacSHA256(secret: DemoBackend.signingKey)),
                    .logging(sink: IndentedLogSink()),
                ]))
        let profile = Endpoint<[String: String]>.get("me")
        await step {
            // The login screen: nobody is signed in yet, so the login goes without a token.
            let answer = try await client.send(DemoLogin.endpoint)
            try await session.logIn(Credential(accessToken: answer.token, userID: answer.userID))
            print("   signed in as \(answer.userID)")
        }
        await step {
            let me = try await client.send(profile)
            print("   → \(me["name"] ?? "?"), signature \(me["signature"] ?? "?")")
        }
        await step {
            _ = try await client.send(Endpoint<String>.post("forget-session"))
            print("   the server forgot the session; the next request meets code 99")
            let me = try await client.send(profile)
            print("   → \(me["name"] ?? "?") again, after the silent login")
        }
        await step {
            try await session.logOut()
            print("   logged out: the next request goes without a token")
            _ = try await client.send(profile)
        }
        watcher.cancel()
    }
}
