import Courier
import CourierTesting
import Foundation
import Testing

/// Secrets a request or a response carries never reach the error's description, the log (with
/// details on) or the logged `curl` command, over real HTTP.
@Suite struct RedactionLeakTests {
    /// One shape of secret: the endpoint that carries it, and what the server answers.
    struct Leak: Sendable, CustomTestStringConvertible {
        let name: String
        let endpoint: Endpoint<String>
        var answer: LoopbackServer.Response = .init(status: 404)
        var testDescription: String { name }
    }

    static let canary = "CANARY7Q"

    static let leaks: [Leak] = [
        Leak(
            name: "a URL with a token, percent-encoded in a query value",
            endpoint: .get("missing", query: ["next": "https://app/cb?access_token=\(canary)"])),
        Leak(
            name: "a nested form name",
            endpoint: .post("missing", body: .form(["user[password]": canary, "name": "ann"]))),
        Leak(
            name: "a nested multipart text field",
            endpoint: .post("missing", body: .multipart(MultipartForm(fields: ["user[password]": canary])))),
        Leak(
            name: "header values holding a URL",
            endpoint: .get(
                "missing",
                headers: [
                    "Referer": "https://app.example/x?access_token=\(canary)",
                    "X-Callback-URL": "https://admin:\(canary)@hooks.example/in",
                ])),
        Leak(
            name: "a body excerpt cut between a URL's password and its @",
            endpoint: .get("missing"),
            answer: .init(
                status: 404, headers: ["Content-Type": "text/plain"],
                body: Data((String(repeating: "x", count: 491) + " https://ann:\(canary)@host/ more").utf8))),
        Leak(
            name: "JSON escaped twice in an error body",
            endpoint: .get("missing"),
            answer: .json(
                #"{"error":"bad {\"detail\":\"{\\\"token\\\":\\\"\#(canary)\\\"}\"}"}"#, status: 400)),
        Leak(
            name: "names a backend uses for one-time and signed secrets",
            endpoint: .post(
                "missing?jwt=\(canary)&pass=\(canary)",
                body: .form(["client_assertion": canary, "otp": canary, "pin": canary, "pwd": canary]))),
    ]

    @Test("no secret reaches the description, the detailed log or the curl command", arguments: leaks)
    func noLeak(_ leak: Leak) async throws {
        let sink = CapturingSink()
        let backend = try Backend {
            $0.interceptors = [.logging(sink: sink, includesDetails: true, includesCurlCommands: true)]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/missing") { _ in leak.answer }
        let error = await networkError { _ = try await backend.client.send(leak.endpoint) }

        let failure = try #require(error)
        #expect(failure.status == leak.answer.status)
        let text = "\(failure)\n\(failure.localizedDescription)\n\(sink.lines.joined(separator: "\n"))"
        #expect(!text.contains(Self.canary), "\(text)")
        // What was hidden did cross the wire, one way or the other.
        let received = try #require(backend.server.requests.first)
        let wire = [
            received.target, "\(received.headers)", String(decoding: received.body + leak.answer.body, as: UTF8.self),
        ]
        #expect(wire.contains { $0.contains(Self.canary) })
        // Something was hidden where it shows (past the excerpt's end there is nothing to show).
        if leak.answer.body.count < NetworkError.snippetLimit {
            #expect(text.contains("<redacted>"), "\(text)")
        }
    }

    @Test("a request to a URL with a user name and password keeps both out of errors and logs")
    func userInfoOverTheWire() async throws {
        let sink = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: sink, includesDetails: true)] }
        defer { backend.server.stop() }
        let url = "http://alice:hunter2@127.0.0.1:\(backend.server.port)/v1/missing"
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get(url)) }

        #expect(error?.status == 404)
        let text = "\(String(describing: error))\n\(sink.lines.joined(separator: "\n"))"
        #expect(!text.contains("alice") && !text.contains("hunter2"), "\(text)")
        #expect(text.contains("http://<redacted>@127.0.0.1"))
    }

    @Test("an error's user-facing description is its message (the backend's, for a business error), redacted")
    func localizedDescription() {
        var business = NetworkError(.business, "The backend answered code 20001.")
        business.businessMessage = "Insufficient balance"
        #expect(business.localizedDescription == "Insufficient balance")
        var failed = NetworkError(.transport, "Could not reach http://ann:pw@host/x")
        failed.request = "GET http://host/x?token=<redacted>"
        #expect(failed.localizedDescription == "Could not reach http://<redacted>@host/x")
        var forbidden = NetworkError(.httpStatus, "The server answered 403.")
        forbidden.businessMessage = "token expired"
        forbidden.userMessage = "Please sign in again"
        #expect(forbidden.localizedDescription == "Please sign in again")
    }

    @Test("a server's message of any length is redacted whole, then shown cut short")
    func longMessage() {
        var error = NetworkError(.business, "The backend answered code 1.")
        error.businessMessage = String(repeating: "a:// ", count: 1_000)
        error.userMessage = error.businessMessage
        #expect(error.description.count < 3 * 2_048)
        #expect(error.description.contains("… (5000 characters)"))
        #expect(error.localizedDescription.count < 2 * 2_048)
        // A cut in the middle of a secret shows none of it.
        for url in ["https://ann:hunter2@host/", "https%3A%2F%2Fann%3Ahunter2%40host", #"https:\/\/ann:hunter2@host"#] {
            for padding in 2_030...2_048 {
                error.businessMessage = String(repeating: "x", count: padding) + " " + url
                #expect(!error.description.contains("hunt"), "\(url)")
            }
        }
    }
}
