import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Recording a backend over real HTTP and replaying it with nothing sent.
@Suite struct RecordingTests {
    @Test("a recording made against a live server is replayed after it stopped, and nothing is sent")
    func recordThenReplay() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/orders", method: .get) { request in
            .envelope(data: [Order(id: Int(request.query["page"] ?? "0") ?? 0, title: "Tea")])
        }
        server.route("/v1/orders", method: .post) { request in
            .envelope(data: Order(id: 7, title: try request.json([String: String].self)["title"] ?? ""))
        }
        let recorder = try recording.recorder()
        let live = recordingClient(server.baseURL, recorder)
        let page: [Order] = try await live.send(.get("orders", query: ["page": "2"]))
        let created: Order = try await live.send(.post("orders", body: .json(["title": "Coffee"])))
        #expect(page == [Order(id: 2, title: "Tea")])
        #expect(created == Order(id: 7, title: "Coffee"))
        server.stop()
        #expect(try recording.archive().entries.count == 2)

        let (replayer, spy) = try recording.replayer()
        let offline = recordingClient(server.baseURL, replayer)
        let replayedPage: [Order] = try await offline.send(.get("orders", query: ["page": "2"]))
        let replayedCreate: Order = try await offline.send(.post("orders", body: .json(["title": "Coffee"])))
        #expect(replayedPage == page)
        #expect(replayedCreate == created)
        #expect(spy.requests.isEmpty, "the replay sent nothing")
        #expect(replayer.replayedCount == 2)
        #expect(server.requests.count == 2, "the server saw only the recording run")
    }

    @Test("GET, PUT, GET on one URL replays the answers in recorded order")
    func getPutGet() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try itemServer()
        let live = recordingClient(server.baseURL, try recording.recorder())
        let before: Order = try await live.send(.get("item"))
        let _: Order = try await live.send(.put("item", body: .json(["title": "Coffee"])))
        let after: Order = try await live.send(.get("item"))
        #expect([before.title, after.title] == ["Tea", "Coffee"])
        server.stop()

        let offline = recordingClient(server.baseURL, try recording.replayer().0)
        let first: Order = try await offline.send(.get("item"))
        let _: Order = try await offline.send(.put("item", body: .json(["title": "Coffee"])))
        let second: Order = try await offline.send(.get("item"))
        #expect([first.title, second.title] == ["Tea", "Coffee"])
        // Every recorded answer was used once: one more GET has none left.
        let extra = await networkError { let _: Order = try await offline.send(.get("item")) }
        #expect(extra?.code == .invalidRequest, "a miss is not a transport failure: no layer retries it")
        #expect(extra?.message.contains("Every one of the 2 recorded answers to it was used") == true)
    }

    @Test("only the last attempt of a retried request is recorded, and the replay needs no retry")
    func retriedRequest() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        let count = Counter()
        server.route("/v1/flaky") { _ in
            count.increment() == 1 ? .text("busy", status: 503) : .envelope(data: Order(id: 3, title: "Tea"))
        }
        let retry = RetryInterceptor.Policy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        let live = recordingClient(server.baseURL, try recording.recorder()) { $0.interceptors = [.retry(retry)] }
        let order: Order = try await live.send(.get("flaky"))
        #expect(order.id == 3)
        #expect(server.requests.count == 2, "the server saw both attempts")
        server.stop()
        let entries = try recording.archive().entries
        #expect(entries.map(\.response.status) == [200])

        let (replayer, spy) = try recording.replayer()
        let offline = recordingClient(server.baseURL, replayer) { $0.interceptors = [.retry(retry)] }
        let replayed: Order = try await offline.send(.get("flaky"))
        #expect(replayed == order)
        #expect(replayer.replayedCount == 1)
        #expect(spy.requests.isEmpty)
    }

    @Test("an unmatched request fails with a diff against the closest recorded request")
    func unmatchedDiff() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        server.route("/v1/profile") { _ in .envelope(data: Order(id: 9, title: "Me")) }
        let live = recordingClient(server.baseURL, try recording.recorder())
        let _: [Order] = try await live.send(.post("orders", query: ["page": "1"], body: .json(["sort": "new"])))
        let _: Order = try await live.send(.get("profile"))
        server.stop()

        let offline = recordingClient(server.baseURL, try recording.replayer().0)
        let error = await networkError {
            let _: [Order] = try await offline.send(.post("orders", query: ["page": "2"], body: .json(["sort": "old"])))
        }
        let message = try #require(error?.message)
        #expect(error?.code == .invalidRequest)
        #expect(message.contains("answers POST /v1/orders"))
        #expect(message.contains("The closest is exchange 1, POST /v1/orders"))
        #expect(message.contains("query: sent only page=2, recorded only page=1"))
        #expect(message.contains(#"body: sent {"sort":"old"}, recorded {"sort":"new"}"#))
        #expect(message.contains("COURIER_RECORDING=missing"))
    }

    @Test("two clients replay their own recordings at once, each answered from its own")
    func parallelReplays() async throws {
        let recordings = [TemporaryRecording(), TemporaryRecording()]
        defer { for recording in recordings { recording.remove() } }
        let server = try LoopbackServer()
        server.route("/v1/who") { request in .envelope(data: Order(id: 0, title: request.query["name"] ?? "")) }
        for (index, recording) in recordings.enumerated() {
            let live = recordingClient(server.baseURL, try recording.recorder())
            for number in 0..<20 {
                let _: Order = try await live.send(.get("who", query: ["name": "client\(index)", "n": "\(number)"]))
            }
        }
        server.stop()
        let replayers = try recordings.map { try $0.replayer().0 }
        let titles = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for (index, replayer) in replayers.enumerated() {
                let client = recordingClient(server.baseURL, replayer)
                for number in (0..<20).reversed() {
                    group.addTask {
                        let order: Order = try await client.send(
                            .get("who", query: ["name": "client\(index)", "n": "\(number)"]))
                        return (index, order.title)
                    }
                }
            }
            return try await group.reduce(into: [(Int, String)]()) { $0.append($1) }
        }
        #expect(titles.count == 40)
        #expect(titles.allSatisfy { $0.1 == "client\($0.0)" })
        #expect(replayers.map(\.replayedCount) == [20, 20])
    }

    @Test("record-missing answers what the recording holds and records the rest")
    func recordMissing() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/a") { _ in .envelope(data: Order(id: 1, title: "a")) }
        server.route("/v1/b") { _ in .envelope(data: Order(id: 2, title: "b")) }
        let _: Order = try await recordingClient(server.baseURL, try recording.recorder()).send(.get("a"))
        let inner = TestTransport.make() ?? NetworkClient.Configuration.defaultTransport()
        let missing = try RecordingTransport(file: recording.file, mode: .recordMissing, wrapping: inner)
        let client = recordingClient(server.baseURL, missing)
        let _: Order = try await client.send(.get("a"))
        let _: Order = try await client.send(.get("b"))
        #expect(server.requests.map(\.path) == ["/v1/a", "/v1/b"], "only the missing one was sent")
        #expect(try recording.archive().entries.map { RecordedRequestPath.of($0) } == ["/v1/a", "/v1/b"])
        server.stop()
    }

    @Test("record-missing on a new file: GET, PUT, GET and a retried request each reach the backend")
    func recordMissingRepeats() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try itemServer()
        let count = Counter()
        server.route("/v1/flaky") { _ in
            count.increment() == 1 ? .text("busy", status: 503) : .envelope(data: Order(id: 3, title: "Tea"))
        }
        let inner = TestTransport.make() ?? NetworkClient.Configuration.defaultTransport()
        // Two attempts: the second must reach the backend, not the 503 the first just recorded.
        let retry = RetryInterceptor.Policy(maxAttempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        let client = recordingClient(
            server.baseURL, try RecordingTransport(file: recording.file, mode: .recordMissing, wrapping: inner)
        ) { $0.interceptors = [.retry(retry)] }
        let before: Order = try await client.send(.get("item"))
        let _: Order = try await client.send(.put("item", body: .json(["title": "Coffee"])))
        let after: Order = try await client.send(.get("item"))
        #expect([before.title, after.title] == ["Tea", "Coffee"], "the second GET was not answered by the first")
        let flaky: Order = try await client.send(.get("flaky"))
        #expect(flaky.id == 3, "the retry reached the backend, not the 503 just recorded")
        server.stop()
        let entries = try recording.archive().entries
        #expect(
            entries.map { "\($0.request.method) \(RecordedRequestPath.of($0)) \($0.response.status)" } == [
                "GET /v1/item 200", "PUT /v1/item 200", "GET /v1/item 200", "GET /v1/flaky 200",
            ])
    }

    @Test("a download is recorded with its bytes and replayed into the file")
    func download() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        let bytes = Data((0..<70_000).map { UInt8($0 % 256) })
        server.route("/v1/report.bin") { _ in
            .init(status: 200, headers: ["Content-Type": "application/octet-stream"], body: bytes)
        }
        try FileManager.default.createDirectory(at: recording.folder, withIntermediateDirectories: true)
        let live = recordingClient(server.baseURL, try recording.recorder())
        let first = recording.folder.appendingPathComponent("first.bin")
        _ = try await live.download(.download("report.bin"), to: first).value
        server.stop()
        #expect(try Data(contentsOf: first) == bytes)

        let (replayer, spy) = try recording.replayer()
        let second = recording.folder.appendingPathComponent("second.bin")
        _ = try await recordingClient(server.baseURL, replayer).download(.download("report.bin"), to: second).value
        #expect(try Data(contentsOf: second) == bytes)
        #expect(spy.requests.isEmpty)
    }

    @Test("a layer that sends two different requests in one call keeps both in the recording")
    func twoRequestsInOneCall() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/csrf") { _ in .envelope(data: "t") }
        server.route("/v1/a") { _ in .envelope(data: "a") }
        let live = recordingClient(server.baseURL, try recording.recorder()) { $0.interceptors = [Preflight()] }
        let _: String = try await live.send(.get("a"))
        server.stop()
        #expect(try recording.archive().entries.map { RecordedRequestPath.of($0) } == ["/v1/csrf", "/v1/a"])
        let offline = recordingClient(server.baseURL, try recording.replayer().0) { $0.interceptors = [Preflight()] }
        let replayed: String = try await offline.send(.get("a"))
        #expect(replayed == "a")
    }

    @Test("the mode comes from COURIER_RECORDING, and a wrong value is a clear error")
    func modeFromEnvironment() throws {
        #expect(try RecordingMode.fromEnvironment([:]) == .replay)
        #expect(try RecordingMode.fromEnvironment(["COURIER_RECORDING": "missing"]) == .recordMissing)
        #expect(try RecordingMode.fromEnvironment(["COURIER_RECORDING": "ALL"]) == .recordAll)
        #expect(try RecordingMode.fromEnvironment(["COURIER_RECORDING": ""], default: .recordAll) == .recordAll)
        #expect(throws: NetworkError.self) { try RecordingMode.fromEnvironment(["COURIER_RECORDING": "sometimes"]) }
    }

    @Test("a file that is not an HTTP archive is refused when the transport is made")
    func brokenFile() throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        try FileManager.default.createDirectory(at: recording.folder, withIntermediateDirectories: true)
        try Data("{\"log\": 3}".utf8).write(to: recording.file)
        let error = #expect(throws: NetworkError.self) {
            _ = try RecordingTransport(file: recording.file, mode: .replay)
        }
        #expect(error?.code == .decodingFailed)
    }

    @Test("replay mode without a recording fails each request, saying how to record")
    func noRecording() async throws {
        let recording = TemporaryRecording()
        let client = recordingClient(URL(string: "http://127.0.0.1:9/")!, try RecordingTransport(file: recording.file))
        let error = await networkError { let _: Order = try await client.send(.get("a")) }
        #expect(error?.message.contains("The recording holds no exchange.") == true)
        #expect(!FileManager.default.fileExists(atPath: recording.folder.path))
    }
}

/// A layer that sends a request of its own before each request, through the rest of the chain.
private struct Preflight: Interceptor {
    var layer: InterceptorLayer { "preflight" }
    func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        var preflight = request
        preflight.url = request.url.deletingLastPathComponent().appendingPathComponent("csrf")
        _ = try await next(preflight)
        return try await next(request)
    }
}

/// A server with one item, `/v1/item`: GET reads its title ("Tea" at first), PUT sets it.
private func itemServer() throws -> LoopbackServer {
    let server = try LoopbackServer()
    let title = Locked("Tea")
    server.route("/v1/item", method: .get) { _ in .envelope(data: Order(id: 1, title: title.withLock { $0 })) }
    server.route("/v1/item", method: .put) { request in
        let new = try request.json([String: String].self)["title"] ?? ""
        title.withLock { $0 = new }
        return .envelope(data: Order(id: 1, title: new))
    }
    return server
}

/// The path of a recorded exchange's URL.
enum RecordedRequestPath {
    static func of(_ entry: HTTPArchive.Entry) -> String {
        URLComponents(string: entry.request.url)?.path ?? entry.request.url
    }
}
