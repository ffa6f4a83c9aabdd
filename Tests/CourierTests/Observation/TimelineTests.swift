import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Keeps what a client's observers hear, in order.
final class ObserverLog: RequestObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [String] = []
    private var ended: [RequestTimeline] = []
    private var ends: [RequestTimeline.Attempt] = []
    private var texts: [String] = []

    func requestStarted(_ request: ObservedRequest) {
        lock.withLock {
            heard.append("started \(request.id)")
            texts.append(String(reflecting: request))
        }
    }

    func attemptStarted(_ number: Int, request: ObservedRequest) {
        lock.withLock {
            heard.append("attempt \(number) of \(request.id)")
            texts.append(String(reflecting: request))
        }
    }

    func attemptEnded(_ attempt: RequestTimeline.Attempt, of request: ObservedRequest) {
        lock.withLock {
            heard.append("attempt \(attempt.number) ended of \(request.id)")
            ends.append(attempt)
            texts.append(String(reflecting: attempt))
        }
    }

    func requestEnded(_ timeline: RequestTimeline) {
        lock.withLock {
            heard.append("ended \(timeline.request.id)")
            ended.append(timeline)
            var dumped = ""
            dump(timeline, to: &dumped)
            texts.append(dumped)
        }
    }

    var events: [String] { lock.withLock { heard } }
    var timelines: [RequestTimeline] { lock.withLock { ended } }
    var endedAttempts: [RequestTimeline.Attempt] { lock.withLock { ends } }
    /// Everything the observer was given, written out whole.
    var everything: String { lock.withLock { texts.joined(separator: "\n") } }
}

/// Timelines over real HTTP on the suite's transport: phases, attempts, waits, the cache and
/// shared transfers, as observers get them.
@Suite struct TimelineTests {
    private func backend(
        _ observations: ObserverLog, configure: (inout NetworkClient.Configuration) -> Void = { _ in }
    )
        throws -> Backend
    {
        try Backend {
            $0.observers = [observations]
            configure(&$0)
        }
    }

    /// The phases that were measured, in their order.
    private func measured(_ phases: RequestTimeline.Phases) -> [Duration] {
        [
            phases.nameLookup, phases.connect, phases.tlsHandshake, phases.requestSent, phases.firstByte,
            phases.bodyReceived,
        ].compactMap { $0 }.filter { $0 > .zero }
    }

    @Test("a request's timeline has its attempt's phases in order, its connection, bytes, status and code")
    func phasesInOrder() async throws {
        let observations = ObserverLog()
        let backend = try backend(observations)
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: ["a", "b"]) }
        let orders = Endpoint<[String]>.get("orders").sharingIdenticalRequests(false)
        _ = try await backend.client.send(orders)
        _ = try await backend.client.send(orders)

        let timelines = observations.timelines
        try #require(timelines.count == 2)
        let first = timelines[0]
        let attempt = try #require(first.attempts.first)
        #expect(first.attempts.count == 1 && attempt.number == 1 && attempt.reason == .first)
        #expect(first.status == 200 && first.failure == nil && first.businessCode == 0)
        #expect(attempt.status == 200 && attempt.failure == nil)
        #expect(first.request.url.hasSuffix("/v1/orders") && first.request.method == .get)
        #expect(first.decoding.map { $0 > .zero } == true)
        #expect(first.total >= attempt.start + attempt.duration)
        #expect(first.waits.isEmpty && first.cache == nil && first.sharedTransfer == nil)
        let phases = measured(attempt.phases)
        #expect(phases == phases.sorted(), "phases end in order: \(attempt.phases)")
        #expect(phases.allSatisfy { $0 <= attempt.duration })
        #expect(attempt.phases.firstByte != nil && attempt.phases.bodyReceived != nil)
        #expect(attempt.bytes.responseBody == #"{"code":0,"msg":"ok","data":["a","b"]}"#.utf8.count)
        #expect(attempt.bytes.requestBody == 0)
        let second = try #require(timelines[1].attempts.first)
        if TestTransport.isURLSession {
            // FoundationNetworking reports no task metrics: what it cannot tell is not measured.
            #expect(attempt.phases.nameLookup == nil && attempt.phases.connect == nil)
            #expect(attempt.connection.isReused == nil && attempt.connection.remoteAddress == nil)
            #expect(attempt.bytes.requestHeaders == nil && attempt.bytes.responseHeaders == nil)
            #expect("\(attempt.phases)".contains("dns not measured"))
        } else {
            #expect(attempt.phases.connect.map { $0 > .zero } == true)
            #expect(attempt.connection.isReused == false && second.connection.isReused == true)
            #expect(second.phases.connect == .zero, "a reused connection has no connect phase")
            #expect(attempt.connection.remoteAddress == "127.0.0.1:\(backend.server.port)")
            #expect(attempt.connection.httpVersion == "1.1")
            #expect(attempt.bytes.requestHeaders.map { $0 > 20 } == true)
            #expect(attempt.bytes.responseHeaders.map { $0 > 20 } == true)
        }
        let id = first.request.id
        #expect(
            observations.events.prefix(4) == [
                "started \(id)", "attempt 1 of \(id)", "attempt 1 ended of \(id)", "ended \(id)",
            ])
    }

    @Test("a request that waited for a token refresh shows the wait and the attempt sent with the new token")
    func refreshWait() async throws {
        let observations = ObserverLog()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old", refreshToken: "r")),
            refresh: { _ in
                try await Task.sleep(for: .milliseconds(150))
                return Credential(accessToken: "new")
            })
        let backend = try backend(observations) { $0.session = session }
        defer { backend.server.stop() }
        backend.server.route("/v1/data") { request in
            request.headers["token"] == "new" ? .envelope(data: "fine") : .init(status: 401)
        }
        #expect(try await backend.client.send(Endpoint<String>.get("data")) == "fine")

        let timeline = try #require(observations.timelines.first)
        #expect(timeline.attempts.map(\.reason) == [.first, .refreshedToken])
        #expect(timeline.attempts.map(\.status) == [401, 200])
        let wait = try #require(timeline.waits.first)
        #expect(timeline.waits.count == 1 && wait.kind == .tokenRefresh)
        #expect(wait.duration >= .milliseconds(150))
        #expect(wait.start >= timeline.attempts[0].start + timeline.attempts[0].duration)
        #expect(timeline.attempts[1].start >= wait.start + wait.duration)
    }

    @Test("a retried request has an attempt per send, the pauses, and one traceparent per attempt in one trace")
    func retriesAndTrace() async throws {
        let observations = ObserverLog()
        let policy = RetryInterceptor.Policy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        let backend = try backend(observations) { $0.interceptors = [.traceContext(), .retry(policy)] }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/r") { _ in count.increment() < 3 ? .init(status: 503) : .envelope(data: "third") }
        #expect(try await backend.client.send(Endpoint<String>.get("r")) == "third")

        let timeline = try #require(observations.timelines.first)
        #expect(timeline.attempts.map(\.reason) == [.first, .retry, .retry])
        #expect(timeline.attempts.map(\.status) == [503, 503, 200])
        #expect(timeline.waits.map(\.kind) == [.retryDelay, .retryDelay])
        let sent = backend.server.requests.map { $0.headers.fields.filter { $0.name.lowercased() == "traceparent" } }
        #expect(sent.map(\.count) == [1, 1, 1], "one header per attempt")
        let values = sent.compactMap(\.first?.value)
        let parts = values.map { $0.split(separator: "-").map(String.init) }
        #expect(parts.allSatisfy { $0.count == 4 && $0[0] == "00" && $0[3] == "01" })
        #expect(Set(parts.map { $0[1] }).count == 1, "one trace")
        #expect(Set(parts.map { $0[2] }).count == 3, "a span id per attempt")
        #expect(timeline.attempts.map(\.traceParent) == values)
        #expect(timeline.traceID == parts.first?[1])
    }

    @Test("the caller's trace is carried, with its state; an endpoint that skips the layer sends none")
    func callerTrace() async throws {
        let observations = ObserverLog()
        let backend = try backend(observations) { $0.interceptors = [.traceContext()] }
        defer { backend.server.stop() }
        backend.server.route("/v1/t") { _ in .envelope(data: "ok") }
        let trace = try #require(
            TraceContext(
                traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "congo=t61rcWkgMzE")
        )
        _ = try await TraceContext.$current.withValue(trace) {
            try await backend.client.send(Endpoint<String>.get("t"))
        }
        _ = try await TraceContext.$current.withValue(trace) {
            try await backend.client.send(Endpoint<String>.get("t").skipping(.traceContext))
        }
        let requests = backend.server.requests
        try #require(requests.count == 2)
        let header = try #require(requests[0].headers["traceparent"])
        #expect(header.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-") && !header.contains("00f067aa0ba902b7"))
        #expect(requests[0].headers["tracestate"] == "congo=t61rcWkgMzE")
        #expect(requests[1].headers["traceparent"] == nil && requests[1].headers["tracestate"] == nil)
        #expect(observations.timelines.map(\.traceID) == ["4bf92f3577b34da6a3ce929d0e0e4736", nil])
    }

    @Test("cache outcomes: stored on a miss, a hit without an attempt, a 304 revalidated")
    func cacheOutcomes() async throws {
        let observations = ObserverLog()
        let backend = try backend(observations) { $0.cache = ResponseCache() }
        defer { backend.server.stop() }
        backend.server.route("/v1/p") { request in
            if request.headers["If-None-Match"] == #""1""# { return .init(status: 304, headers: ["ETag": #""1""#]) }
            var answer = LoopbackServer.Response.envelope(data: "profile")
            answer.headers["ETag"] = #""1""#
            return answer
        }
        let fresh = Endpoint<String>.get("p").caching(.cacheFirst(maxAge: .seconds(60)))
        _ = try await backend.client.send(fresh)
        _ = try await backend.client.send(fresh)
        _ = try await backend.client.send(Endpoint<String>.get("p").caching(.http))
        let timelines = observations.timelines
        #expect(timelines.map(\.cache) == [.miss, .hit, .revalidated])
        #expect(timelines.map(\.attempts.count) == [1, 0, 1])
        #expect(timelines.map(\.status) == [200, 200, 200])
        #expect(timelines[2].attempts.first?.status == 304)
    }

    @Test("identical requests that share a transfer: one started it with its attempt, the other joined and waited")
    func sharedTransfer() async throws {
        let observations = ObserverLog()
        let backend = try backend(observations)
        defer { backend.server.stop() }
        let gate = Gate()
        backend.server.route("/v1/s") { _ in
            await gate.pass()
            return .envelope(data: "shared")
        }
        let endpoint = Endpoint<String>.get("s")
        async let first = backend.client.send(endpoint)
        await gate.arrivals(1)
        async let second = backend.client.send(endpoint)
        while backend.client.sharedTransferWaiters < 2 { try await Task.sleep(for: .milliseconds(5)) }
        gate.open()
        _ = try await (first, second)

        #expect(backend.server.requests.count == 1)
        let timelines = observations.timelines
        let started = try #require(timelines.first { $0.sharedTransfer == .started })
        let joined = try #require(timelines.first { $0.sharedTransfer == .joined })
        #expect(started.attempts.count == 1 && joined.attempts.isEmpty)
        #expect(joined.waits.map(\.kind) == [.sharedTransfer])
        #expect(joined.status == 200 && started.status == 200)
    }

    /// A layer of the app's that adds its own credential under a name the redactor does not know.
    private struct DeviceKey: Interceptor {
        var layer: InterceptorLayer { "deviceKey" }
        func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> HTTPResponse
        {
            var request = request
            request.headers["X-Device"] = "canary-device-key-31"
            request.markAsSecret("canary-device-key-31")
            return try await next(request)
        }
    }

    @Test(
        "what observers get hides the token, a refreshed token in its answer, the signature, marked values and the redactor's names"
    )
    func canaries() async throws {
        let log = ObserverLog()
        let token = "canary-token-5c1f0e"
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: token, refreshToken: "canary-refresh-9")),
            refresh: { refresh in
                Credential(accessToken: try await refresh.client.send(Endpoint<String>.post("refresh")))
            })
        let backend = try backend(log) {
            $0.session = session
            $0.interceptors = [.traceContext(), DeviceKey(), .signing(.hmacSHA256(secret: Data("canary-secret".utf8)))]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/refresh") { _ in .envelope(data: "canary-new-token-4") }
        backend.server.route("/v1/secret") { request in
            request.headers["token"] == "canary-new-token-4" ? .envelope(data: "fine") : .init(status: 401)
        }
        _ = try await backend.client.send(
            Endpoint<String>.get("secret", query: ["password": "canary-password-77", "page": "1"]))
        _ = await networkError {
            _ = try await backend.client.send(
                Endpoint<String>.get("missing", query: ["password": "canary-password-77"]))
        }

        let sent = try #require(backend.server.requests.first { $0.path == "/v1/secret" })
        let signature = try #require(sent.query["sign"])
        #expect(sent.headers["token"] == token && sent.headers["X-Device"] == "canary-device-key-31")
        let timelines = log.timelines
        #expect(timelines.count == 3, "the refresh's own request has a timeline too")
        var everything = log.everything
        for timeline in timelines {
            // Whatever reflection reaches: no body, no decoder, only what the properties show.
            var mirrored = ""
            func walk(_ mirror: Mirror, depth: Int) {
                guard depth < 12 else { return }
                for child in mirror.children {
                    if let bytes = child.value as? Data {
                        mirrored += "Data: " + String(decoding: bytes, as: UTF8.self)
                    } else if child.value is JSONDecoder {
                        mirrored += "Decoder"
                    }
                    mirrored += "\(child.label ?? "-")=\(String(describing: child.value))\n"
                    walk(Mirror(reflecting: child.value), depth: depth + 1)
                }
            }
            walk(Mirror(reflecting: timeline), depth: 0)
            everything += mirrored
            #expect(!mirrored.contains("Data") && !mirrored.contains("Decoder"), "\(mirrored)")
        }
        for secret in [
            token, "canary-new-token-4", "canary-refresh-9", signature, "canary-password-77", "canary-device-key-31",
        ] {
            #expect(!everything.contains(secret), "\(secret) reached an observer")
        }
        #expect(everything.contains("page=1"), "what is not secret stays")
        #expect(timelines.first { $0.request.url.hasSuffix("/v1/refresh") }?.businessCode == 0)
    }

    @Test("a failed request ends its timeline with the failure and the failed attempt")
    func failure() async throws {
        let observations = ObserverLog()
        let backend = try backend(observations)
        defer { backend.server.stop() }
        backend.server.route("/v1/gone") { _ in .init(status: 404) }
        _ = await networkError { _ = try await backend.client.send(Endpoint<String>.get("gone")) }
        let timeline = try #require(observations.timelines.first)
        #expect(timeline.failure == .httpStatus && timeline.status == 404)
        #expect(timeline.attempts.map(\.status) == [404])
    }

    @Test("the logging layer's line gains the phases when asked")
    func loggingPhases() async throws {
        let lines = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: lines, includesPhases: true)] }
        defer { backend.server.stop() }
        backend.server.route("/v1/l") { _ in .envelope(data: "ok") }
        _ = try await backend.client.send(Endpoint<String>.get("l"))
        let answer = try #require(lines.all.first { $0.event == .response })
        #expect(answer.summary.contains("first byte"))
        // Linux URLSession tells no phases: Courier's own moments stand in for the head and body.
        let pattern =
            TestTransport.isURLSession
            ? #"\[dns not measured, connect not measured, tls not measured, sent not measured, first byte [0-9]+\.[0-9]{2} ms, body [0-9]+\.[0-9]{2} ms\]"#
            : #"\[dns [0-9]+\.[0-9]{2} ms, connect [0-9]+\.[0-9]{2} ms, tls 0 ms, sent "#
        #expect(answer.summary.range(of: pattern, options: .regularExpression) != nil, "\(answer.summary)")
    }
}

#if os(Linux)
    /// Timelines over TLS, on CurlTransport (Linux URLSession cannot trust a test's certificate
    /// authority).
    @Suite(.serialized) struct SecureTimelineTests {
        @Test(
            "over TLS the attempt shows the name lookup, connect and TLS handshake in order; the next request reuses the connection",
            .enabled(if: TLSServer.nginxAvailable, "needs nginx (.ci/run installs it)"))
        func tlsPhases() async throws {
            let server = try await TLSServer.start(.nginx)
            defer { server.stop() }
            let observations = ObserverLog()
            var configuration = NetworkClient.Configuration(
                baseURL: server.baseURL,
                transport: try CurlTransport(
                    options: .init(tls: TLSOptions(certificateAuthorities: server.authorityFile))))
            configuration.observers = [observations]
            let client = NetworkClient(configuration: configuration)
            let page = Endpoint<HTTPResponse>(method: .get, path: "", decoding: .response)
            _ = try await client.send(page)
            _ = try await client.send(page)

            let attempts = observations.timelines.flatMap(\.attempts)
            try #require(attempts.count == 2)
            let first = attempts[0].phases
            let (lookup, connect, tls) = (
                try #require(first.nameLookup), try #require(first.connect), try #require(first.tlsHandshake)
            )
            let (firstByte, body) = (try #require(first.firstByte), try #require(first.bodyReceived))
            #expect(lookup <= connect && connect > .zero && tls > connect && firstByte > tls && body >= firstByte)
            #expect(attempts[0].connection.isReused == false && attempts[1].connection.isReused == true)
            #expect(attempts[1].phases.tlsHandshake == .zero, "no handshake on a reused connection")
            #expect(attempts.allSatisfy { $0.connection.httpVersion == "2" })
            #expect(attempts[0].bytes.responseBody == "hello over TLS".utf8.count)
        }
    }
#endif
