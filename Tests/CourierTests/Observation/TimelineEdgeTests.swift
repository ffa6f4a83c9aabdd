import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Timelines at the edges: transfers and streams, waits for the network, a logout while a
/// request is out, a refresh in the background, and W3C trace contexts read from outside.
@Suite struct TimelineEdgeTests {
    @Test("a request that waited for the network shows the wait before its attempt")
    func reachabilityWait() async throws {
        let log = ObserverLog()
        let monitor = ReachabilityPolicyTests.WatchedReachability(.offline)
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in .json(#"{"code":0,"data":"sent"}"#) })
        configuration.reachability = monitor
        configuration.reachabilityPolicy = .waitForConnectivity(timeout: .seconds(60) * TestTiming.scale)
        configuration.observers = [log]
        let client = NetworkClient(configuration: configuration)
        let task = Task { try await client.send(Endpoint<String>.get("a")) }
        #expect(await monitor.waits(1))
        try await Task.sleep(for: .milliseconds(50))
        monitor.manual.set(.online(.wired))
        #expect(try await task.value == "sent")

        let timeline = try #require(log.timelines.first)
        let wait = try #require(timeline.waits.first)
        #expect(timeline.waits.count == 1 && wait.kind == .reachability && wait.duration >= .milliseconds(50))
        #expect(timeline.attempts.first.map { $0.start >= wait.start + wait.duration } == true)
    }

    @Test("offline, a request that would share its transfer fails without having joined or waited for anything")
    func offlineIsNoSharing() async throws {
        let log = ObserverLog()
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in .json(#"{"code":0,"data":"sent"}"#) })
        configuration.reachability = ManualReachability(.offline)
        configuration.observers = [log]
        let client = NetworkClient(configuration: configuration)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("a")) }
        #expect(error?.code == .offline)
        let timeline = try #require(log.timelines.first)
        #expect(timeline.failure == .offline && timeline.sharedTransfer == nil && timeline.waits.isEmpty)
        #expect(timeline.attempts.isEmpty)
    }

    @Test("an upload and a download each have a timeline with their attempt, status and bytes")
    func transfers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = ObserverLog()
        let backend = try Backend { $0.observers = [log] }
        defer { backend.server.stop() }
        let content = Data(repeating: 7, count: 100_000)
        backend.server.route("/v1/media") { _ in .envelope(data: "stored") }
        backend.server.route("/v1/report") { _ in .init(status: 200, body: content) }
        let body = Data(repeating: 1, count: 5_000)
        _ = try await backend.client.upload(
            Endpoint<String>.post("media", body: .data(body, contentType: "application/octet-stream"))
        ).value
        _ = try await backend.client.download(.download("report"), to: directory.file("report.bin")).value

        let timelines = log.timelines
        try #require(timelines.count == 2)
        let upload = try #require(timelines[0].attempts.first)
        #expect(timelines[0].status == 200 && upload.bytes.requestBody == 5_000)
        let download = try #require(timelines[1].attempts.first)
        #expect(timelines[1].status == 200 && timelines[1].failure == nil)
        // A body written to a file is counted by the transport, when it counts.
        #expect(download.bytes.responseBody == (TestTransport.isURLSession ? nil : 100_000))
    }

    @Test("a stream's timeline ends when its head is in; an event stream's each connection has one")
    func streams() async throws {
        let log = ObserverLog()
        let server = try FaultServer([
            .readRequest, .send(StreamTests.eventHead), .send("first"), .pause(.milliseconds(100)), .send("second"),
            .close,
        ])
        defer { server.stop() }
        var configuration = NetworkClient.Configuration(baseURL: server.baseURL, transport: TestTransport.make())
        configuration.observers = [log]
        let client = NetworkClient(configuration: configuration)
        let answer = try await client.stream(StreamTests.feed)
        let ended = log.timelines
        #expect(ended.count == 1 && ended.first?.status == 200 && ended.first?.attempts.count == 1)
        var received = Data()
        for try await piece in answer.body { received.append(piece) }
        #expect(received == Data("firstsecond".utf8))
        #expect(log.timelines.count == 1, "reading the body ends nothing more")
    }

    @Test("a logout while the request is out ends its timeline once, with the logout's error")
    func logoutMidRequest() async throws {
        let log = ObserverLog()
        let gate = Gate()
        let session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "ann-token")))
        let backend = try Backend {
            $0.observers = [log]
            $0.session = session
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/slow") { _ in
            await gate.pass()
            return .envelope(data: "late")
        }
        let request = Task { try await backend.client.send(Endpoint<String>.get("slow")) }
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()
        let error = await networkError { _ = try await request.value }
        #expect(error?.code == .cancelled)

        let ids = log.events.filter { $0.hasPrefix("ended ") }
        #expect(ids.count == 1, "one end: \(log.events)")
        let timeline = try #require(log.timelines.first)
        #expect(timeline.failure == .cancelled)
        #expect(!log.everything.contains("ann-token"))
    }

    @Test("a stale answer is flagged, and its refresh in the background is in no caller's timeline nor trace")
    func staleWhileRevalidate() async throws {
        let log = ObserverLog()
        let backend = try Backend {
            $0.observers = [log]
            $0.cache = ResponseCache()
            $0.interceptors = [.traceContext()]
        }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/s") { _ in .envelope(data: "v\(count.increment())") }
        let endpoint = Endpoint<String>.get("s").caching(.staleWhileRevalidate(maxAge: .zero))
        #expect(try await backend.client.send(endpoint) == "v1")
        let caller = try #require(TraceContext(traceID: "11111111111111111111111111111111"))
        #expect(try await TraceContext.$current.withValue(caller) { try await backend.client.send(endpoint) } == "v1")
        while backend.server.requests.count < 2 || backend.client.activeRequestCount > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let timelines = log.timelines
        #expect(timelines.map(\.cache) == [.miss, .stale])
        #expect(timelines.map(\.attempts.count) == [1, 0])
        let started = log.events.filter { $0.hasPrefix("started ") }.count
        #expect(started == 2, "the background refresh is no caller's request: \(log.events)")
        #expect(
            log.events.filter { $0.hasPrefix("attempt ") }.count == 2, "one attempt, begun and ended: \(log.events)")
        let refresh = try #require(backend.server.requests.last?.headers["traceparent"])
        #expect(!refresh.contains(caller.traceID), "the refresh is in a trace of its own")
    }

    @Test(
        "a traceparent from outside is read only when well formed",
        arguments: [
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true),
            (" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", true),
            ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", true),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", false),
            ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),
            ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", false),
            ("0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false),
            ("", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9O2b7-01", false),
            ("+0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-+1", false),
            ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A", false),
        ])
    func parsing(_ header: String, _ isValid: Bool) {
        let trace = TraceContext(traceparent: header)
        #expect((trace != nil) == isValid)
        if let trace {
            #expect(trace.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && trace.parentID == "00f067aa0ba902b7")
            #expect(trace.isSampled == (header.split(separator: "-")[3].hasPrefix("01")))
        }
    }

    @Test("a timeline's business code is read from the body once, and the body let go then")
    func businessCodeLetsTheBodyGo() {
        let freed = Flag()
        let text = Array(#"{"code":99,"msg":"please log in again","data":{"note":"padding past inline"}}"#.utf8)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: text.count, alignment: 1)
        bytes.copyMemory(from: text, byteCount: text.count)
        var body: Data? = Data(
            bytesNoCopy: bytes, count: text.count,
            deallocator: .custom { pointer, _ in
                pointer.deallocate()
                freed.set()
            })
        let reader = BusinessCodeReader(body: body ?? Data(), decoder: JSONDecoder())
        body = nil
        #expect(!freed.isSet, "kept until the code is asked for")
        #expect(reader.code == 99)
        #expect(freed.isSet, "let go once read")
        #expect(reader.code == 99)
    }

    @Test("a tracestate too long or with a line break is dropped, the trace kept; new ids are well formed and differ")
    func stateAndIDs() {
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(TraceContext(traceparent: parent, tracestate: "a=1,b=2")?.state == "a=1,b=2")
        #expect(TraceContext(traceparent: parent, tracestate: "")?.state == nil)
        for state in [String(repeating: "a", count: 513), "a=1\r\nX-Injected: 1", "é=1"] {
            let trace = TraceContext(traceparent: parent, tracestate: state)
            #expect(trace?.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && trace?.state == nil)
        }
        let traces = (0..<100).map { _ in TraceContext.random() }
        #expect(Set(traces.map(\.traceID)).count == 100)
        #expect(traces.allSatisfy { TraceContext(traceID: $0.traceID) != nil && $0.parentID == nil && $0.isSampled })
        let spans = (0..<100).map { _ in TraceContext.newSpanID() }
        #expect(
            Set(spans).count == 100
                && spans.allSatisfy { TraceContext(traceID: traces[0].traceID, parentID: $0) != nil })
    }
}

/// One trace per request, whatever sends it again and wherever the layer sits.
@Suite struct TraceContinuityTests {
    /// The trace ids of the `traceparent` headers the server received, in order, per path.
    private func traces(_ server: LoopbackServer, _ path: String) -> [String] {
        server.requests.filter { $0.path == path }.compactMap { $0.headers["traceparent"] }.map {
            String($0.split(separator: "-")[1])
        }
    }

    @Test("a request sent again with a refreshed token stays in its trace, and so does the refresh's own request")
    func refreshKeepsTheTrace() async throws {
        let log = ObserverLog()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old", refreshToken: "r")),
            refresh: { refresh in
                Credential(accessToken: try await refresh.client.send(Endpoint<String>.post("refresh")))
            })
        let backend = try Backend {
            $0.observers = [log]
            $0.session = session
            $0.interceptors = [.traceContext()]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/refresh") { _ in .envelope(data: "new") }
        backend.server.route("/v1/data") { request in
            request.headers["token"] == "new" ? .envelope(data: "fine") : .init(status: 401)
        }
        #expect(try await backend.client.send(Endpoint<String>.get("data")) == "fine")

        let data = traces(backend.server, "/v1/data")
        let refresh = traces(backend.server, "/v1/refresh")
        #expect(data.count == 2 && refresh.count == 1)
        #expect(Set(data + refresh).count == 1, "one trace: \(data) \(refresh)")
        let timeline = try #require(log.timelines.first { $0.request.url.hasSuffix("/v1/data") })
        #expect(timeline.traceID == data.first && timeline.attempts.compactMap(\.traceParent).count == 2)
    }

    @Test("with the trace layer inside the retry layer, every attempt is in one trace with a span of its own")
    func layerInsideRetry() async throws {
        let policy = RetryInterceptor.Policy(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(5))
        let backend = try Backend { $0.interceptors = [.retry(policy), .traceContext()] }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/r") { _ in count.increment() < 3 ? .init(status: 503) : .envelope(data: "ok") }
        _ = try await backend.client.send(Endpoint<String>.get("r"))
        let headers = backend.server.requests.compactMap { $0.headers["traceparent"] }
        #expect(headers.count == 3 && Set(headers).count == 3)
        #expect(Set(traces(backend.server, "/v1/r")).count == 1)
    }

    @Test("a caller's parent span reaches the timeline, for a tracer to hang the request's spans under")
    func parentReachesTheTimeline() async throws {
        let log = ObserverLog()
        let backend = try Backend {
            $0.observers = [log]
            $0.interceptors = [.traceContext()]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/p") { _ in .envelope(data: "ok") }
        let trace = try #require(TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        _ = try await TraceContext.$current.withValue(trace) {
            try await backend.client.send(Endpoint<String>.get("p"))
        }
        let timeline = try #require(log.timelines.first)
        #expect(timeline.traceID == "0af7651916cd43dd8448eb211c80319c" && timeline.parentID == "b7ad6b7169203331")
    }
}

/// Observers of a transfer another request started, and of a request that left it.
@Suite struct SharedTimelineTests {
    @Test("a request that leaves a shared transfer ends its timeline; the transfer's later attempts reach no observer")
    func starterLeaves() async throws {
        let log = ObserverLog()
        let policy = RetryInterceptor.Policy(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(5))
        let backend = try Backend {
            $0.observers = [log]
            $0.interceptors = [.retry(policy)]
        }
        defer { backend.server.stop() }
        let gate = Gate()
        let count = Counter()
        backend.server.route("/v1/s") { _ in
            if count.increment() == 1 {
                await gate.pass()
                return .init(status: 503)
            }
            return .envelope(data: "shared")
        }
        let endpoint = Endpoint<String>.get("s")
        let starter = Task { try await backend.client.send(endpoint) }
        await gate.arrivals(1)
        let joiner = Task { try await backend.client.send(endpoint) }
        while backend.client.sharedTransferWaiters < 2 { try await Task.sleep(for: .milliseconds(5)) }
        starter.cancel()
        _ = await networkError { _ = try await starter.value }
        gate.open()
        #expect(try await joiner.value == "shared")

        let events = log.events
        let starterID = try #require(events.first.map { String($0.dropFirst("started ".count)) })
        // Its attempt was under way when it left: it ends, as cancelled, before the request does.
        #expect(
            events.filter { $0.hasSuffix(" \(starterID)") } == [
                "started \(starterID)", "attempt 1 of \(starterID)", "attempt 1 ended of \(starterID)",
                "ended \(starterID)",
            ], "\(events)")
        let starterTimeline = try #require(log.timelines.first { $0.sharedTransfer == .started })
        #expect(starterTimeline.attempts.map(\.failure) == [.cancelled] && starterTimeline.failure == .cancelled)
        let joined = try #require(log.timelines.first { $0.sharedTransfer == .joined })
        #expect(joined.status == 200 && joined.attempts.isEmpty && joined.waits.map(\.kind) == [.sharedTransfer])
    }
}
