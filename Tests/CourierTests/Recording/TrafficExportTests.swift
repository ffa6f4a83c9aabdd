import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A client's recent traffic as an HTTP archive, and archives read by a second, independent
/// reader (`scripts/har-check`, written from the HAR 1.2 specification).
@Suite struct TrafficExportTests {
    static let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/har-check")
    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// Runs the independent checker on `data`; its exit status and what it printed.
    static func check(_ data: Data, sortedKeys: Bool = true) throws -> (status: Int32, output: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-check-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try data.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [checker.path] + (sortedKeys ? ["--sorted-keys"] : []) + [file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test("a client keeps its latest exchanges, oldest first, each attempt and each failure on its own")
    func keepsLatest() async throws {
        let server = try LoopbackServer()
        let count = Counter()
        server.route("/v1/n") { request in .envelope(data: request.query["i"] ?? "") }
        server.route("/v1/flaky") { _ in
            count.increment() == 1 ? .text("busy", status: 503) : .envelope(data: "ok")
        }
        let policy = RetryInterceptor.Policy(maxAttempts: 2, baseDelay: .milliseconds(5), maxDelay: .milliseconds(5))
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "v1/", relativeTo: server.baseURL)!.absoluteURL, interceptors: [.retry(policy)],
            transport: TestTransport.make())
        configuration.keptExchanges = 5
        let client = NetworkClient(configuration: configuration)
        for index in 0..<3 { let _: String = try await client.send(.get("n", query: ["i": "\(index)"])) }
        let _: String = try await client.send(.get("flaky"))
        server.stop()
        let refusing = RefusingPort()
        let refused = await networkError {
            let _: String = try await client.send(.get("http://127.0.0.1:\(refusing.port)/v1/n", query: ["i": "gone"]))
        }
        #expect(refused?.code == .transport)

        let entries = client.recentTraffic().entries
        #expect(entries.map { RecordedRequestPath.of($0) } == ["/v1/n", "/v1/flaky", "/v1/flaky", "/v1/n", "/v1/n"])
        #expect(entries.map(\.response.status) == [200, 503, 200, 0, 0], "the refused request was tried twice")
        #expect(entries.first?.request.queryString == [HTTPArchive.NameValue(name: "i", value: "2")])
        #expect(entries.last?.comment?.contains("GET") == true, "a failure says what failed")
        #expect(entries[2].response.content.text?.contains(#""data":"ok""#) == true)
    }

    @Test("a failed exchange's error in the export hides the token, whatever parameter carries it")
    func failureHidesToken() async throws {
        let refusing = RefusingPort()
        let port = refusing.port
        let session = Session(placement: .parameter("u"))
        try await session.logIn(Credential(accessToken: "CANARY-FAILED-77aa"))
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "http://127.0.0.1:\(port)/v1/")!, session: session, transport: TestTransport.make())
        configuration.keptExchanges = 2
        let client = NetworkClient(configuration: configuration)
        let error = await networkError { let _: String = try await client.send(.get("n")) }
        #expect(error?.code == .transport)
        let entry = try #require(client.recentTraffic().entries.first)
        #expect(entry.response.status == 0)
        #expect(entry.comment?.contains("/v1/n") == true)
        #expect(!String(decoding: client.recentTraffic().jsonData(), as: UTF8.self).contains("CANARY-FAILED"))
    }

    @Test("a client that keeps no exchanges exports an empty archive")
    func keepsNone() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .envelope(data: 1) }
        let _: Int = try await backend.client.send(.get("a"))
        #expect(backend.client.recentTraffic().entries.isEmpty)
    }

    @Test("an archive reads back as it was written, keys in sorted order")
    func roundTrip() throws {
        var request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/a?x=1")!, headers: ["Accept": "*/*"],
            body: .json(Data(#"{"b":1}"#.utf8)))
        request.notes.call = 1
        var response = HTTPResponse(status: 201, headers: ["Content-Type": "image/png"], body: Data([0, 255, 1]))
        response.timings = TransferTimings(
            nameLookup: .milliseconds(1), connect: .milliseconds(3), tlsHandshake: .milliseconds(7),
            firstByte: .milliseconds(20), total: .milliseconds(25))
        let entry = HTTPArchive.Entry(
            request: request, body: nil, response: response, startedAt: Date(timeIntervalSince1970: 1_800_000_000.25),
            duration: .milliseconds(26), redactor: .standard)
        let archive = HTTPArchive(entries: [entry])
        let data = archive.jsonData()
        #expect(try HTTPArchive(jsonData: data) == archive)
        #expect(entry.response.content.encoding == "base64")
        #expect(entry.response.content.bytes == Data([0, 255, 1]))
        #expect(entry.startedDateTime == "2027-01-15T08:00:00.250Z")
        #expect(entry.timings.dns == 1 && entry.timings.connect == 6 && entry.timings.ssl == 4)
        #expect(entry.timings.wait == 13 && entry.timings.receive == 5 && entry.time == 25)
        #expect(archive.jsonData() == data, "the same archive is written the same way")
    }

    @Test(
        "the independent HAR 1.2 checker accepts what Courier writes, and refuses a broken archive",
        .enabled(if: hasPython, "needs python3 to run scripts/har-check"))
    func independentReader() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/a") { _ in .envelope(data: ["é", "x"]) }
        server.route("/v1/b") { _ in
            .init(status: 200, headers: ["Content-Type": "application/octet-stream"], body: Data([0, 1, 2]))
        }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "v1/", relativeTo: server.baseURL)!.absoluteURL, transport: try recording.recorder())
        configuration.keptExchanges = 10
        let client = NetworkClient(configuration: configuration)
        let _: [String] = try await client.send(.post("a", body: .form(["q": "1"])))
        let _: Data = try await client.send(.get("b", decoding: .data))
        server.stop()

        for data in [try Data(contentsOf: recording.file), client.recentTraffic().jsonData()] {
            let (status, output) = try Self.check(data)
            #expect(status == 0, "\(output)")
        }
        // The checker can fail: an archive without a version, and one with a negative wait.
        var broken = try JSONSerialization.jsonObject(with: try Data(contentsOf: recording.file)) as! [String: Any]
        var log = broken["log"] as! [String: Any]
        log["version"] = nil
        broken["log"] = log
        let (status, output) = try Self.check(try JSONSerialization.data(withJSONObject: broken), sortedKeys: false)
        #expect(status == 1)
        #expect(output.contains("log: has no `version`"))
    }
}
