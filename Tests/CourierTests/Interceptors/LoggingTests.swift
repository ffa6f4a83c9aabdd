import Courier
import CourierTesting
import Foundation
import Testing

/// A sink that keeps entries for inspection.
struct CapturingSink: LogSink {
    private final class Entries: @unchecked Sendable {
        let lock = NSLock()
        var all: [LogEntry] = []
    }
    private let entries = Entries()
    func write(_ entry: LogEntry) { entries.lock.withLock { entries.all.append(entry) } }
    var all: [LogEntry] { entries.lock.withLock { entries.all } }
    var lines: [String] { all.map(\.line) }
}

@Suite struct LoggingTests {
    @Test("a full session's log has one line pair per attempt and no secret anywhere")
    func noSecrets() async throws {
        let sink = CapturingSink()
        let backend = try Backend {
            $0.session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "TOKEN-SECRET-1")))
            $0.redactor = Redactor.standard.adding(["idCard"])
            $0.interceptors = [
                .retry(.init(maxAttempts: 2, baseDelay: .milliseconds(5))),
                .headers(["Cookie": "sid=COOKIE-SECRET"], computed: { _ in ["Authorization": "Bearer AUTH-SECRET"] }),
                .commonParameters(["version": "3.2.0", "idCard": "ID-SECRET"]),
                .signing(.hmacSHA256(secret: Data("k".utf8))),
                .logging(sink: sink, includesDetails: true),
            ]
        }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/login") { _ in
            count.increment() == 1
                ? .init(status: 503)
                : .json(#"{"code":0,"data":{"token":"TOKEN-SECRET-3","password":"PW-SECRET-1","name":"Ann"}}"#)
        }
        struct Login: Decodable, Sendable { let name: String }
        let login = try await backend.client.send(
            Endpoint<Login>.post("login", body: .form(["user": "ann", "password": "PW-SECRET-2"])).idempotent())
        #expect(login.name == "Ann")
        let lines = sink.lines
        let text = lines.joined(separator: "\n")
        #expect(!text.contains("SECRET"), "\(text)")
        #expect(lines.filter { $0.hasPrefix("→ POST") }.count == 2)
        #expect(lines.contains { $0.hasPrefix("← 503 POST") && $0.contains(" ms, ") })
        #expect(lines.contains { $0.hasPrefix("← 200 POST") })
        #expect(text.contains("user=ann") && text.contains("version=3.2.0") && text.contains("\"name\":\"Ann\""))
        // What a log shows by default on Apple platforms (the summaries) names no user, host or body.
        for entry in sink.all {
            for privateText in ["127.0.0.1", "login", "ann", "Ann", "3.2.0", "Cookie"] {
                #expect(!entry.summary.contains(privateText), "\(entry)")
            }
        }
        #expect(sink.all.map(\.event).filter { $0 == .request }.count == 2)
        #expect(sink.all.contains { $0.event == .detail && $0.details.contains("user=ann") })
        // The secrets did reach the server: the log hid them, the wire did not lose them.
        let form = try #require(backend.server.requests.last).form
        #expect(form["password"] == "PW-SECRET-2" && form["idCard"] == "ID-SECRET")
    }

    @Test("a failed attempt is logged with its error code")
    func failure() async throws {
        let sink = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: sink)] }
        defer { backend.server.stop() }
        backend.server.route("/v1/drop") { _ in LoopbackServer.Response.json("{}").with(.closeBeforeResponding) }
        _ = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("drop")) }
        #expect(sink.lines.count == 2)
        let last = try #require(sink.all.last)
        #expect(last.event == .failure)
        #expect(last.summary.hasPrefix("✗ transport GET (") && last.summary.hasSuffix(" ms)"), "\(last)")
        #expect(last.details.hasPrefix("http://127.0.0.1:") && last.details.hasSuffix("/v1/drop"), "\(last)")
    }
}
