import Courier
import Foundation
import Testing

/// A transport an app writes (here, in the test target, outside Courier) sends one request at a
/// time; the client keeps the rest of the contract for it: redirects, limits, the deadline,
/// cancellation and the wire checks.
@Suite struct OwnTransportTests {
    /// An app's transport: answers each request from a closure, in memory, and keeps what it was
    /// handed. It follows no redirect, keeps no deadline and checks no limit of its own.
    final class AppTransport: Transport, @unchecked Sendable {
        private let lock = NSLock()
        private var handed: [HTTPRequest] = []
        private var cancelledCount = 0
        let answer: @Sendable (HTTPRequest) async throws -> HTTPResponse

        init(_ answer: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.answer = answer }

        /// The requests it was handed, in order.
        var requests: [HTTPRequest] { lock.withLock { handed } }
        /// How many of its sends saw their task cancelled.
        var cancelled: Int { lock.withLock { cancelledCount } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            lock.withLock { handed.append(request) }
            do {
                return try await answer(request)
            } catch {
                if Task.isCancelled { lock.withLock { cancelledCount += 1 } }
                throw error
            }
        }
    }

    static let base = URL(string: "https://api.example.com/v1/")!

    static func client(
        _ transport: AppTransport, timeout: Duration = .seconds(30), interceptors: [any Interceptor] = [],
        limit: Int64? = 64 << 20
    ) -> NetworkClient {
        var configuration = NetworkClient.Configuration(baseURL: base, timeout: timeout, transport: transport)
        configuration.interceptors = interceptors
        configuration.maximumResponseBodySize = limit
        return NetworkClient(configuration: configuration)
    }

    /// A layer that changes each request just before it goes to the transport.
    struct LastLayer: Interceptor {
        let change: @Sendable (inout HTTPRequest) -> Void
        var layer: InterceptorLayer { InterceptorLayer("last") }
        func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> HTTPResponse
        {
            var request = request
            change(&request)
            return try await next(request)
        }
    }

    /// The error of a request to `path` whose caller is cancelled once the transport has it.
    static func cancelledOnceSent(_ path: String, through transport: AppTransport) async throws -> NetworkError? {
        let client = client(transport)
        let waiting = Task {
            await networkError { _ = try await client.send(Endpoint<Int>.get(path).sharingIdenticalRequests(false)) }
        }
        try await eventually { !transport.requests.isEmpty }
        waiting.cancel()
        return await waiting.value
    }

    /// Waits until `condition` holds, for 30 s at most.
    static func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    static func answer(_ status: Int, _ headers: HTTPHeaders = [:], body: String = "") -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Data(body.utf8))
    }

    @Test("a redirect to another origin is followed as a request of its own, without the credentials")
    func crossOriginRedirect() async throws {
        let transport = AppTransport { request in
            request.url.host == "api.example.com"
                ? Self.answer(302, ["Location": "https://cdn.example.net/menu"])
                : .json(#"{"code":0,"data":"tea"}"#)
        }
        let reply = try await Self.client(transport).reply(
            to: Endpoint<String>.get("menu", headers: ["Authorization": "Bearer secret", "X-Shop": "7"]))

        #expect(reply.value == "tea")
        #expect(reply.response.url?.absoluteString == "https://cdn.example.net/menu")
        let sent = transport.requests
        #expect(sent.map(\.url.absoluteString) == ["https://api.example.com/v1/menu", "https://cdn.example.net/menu"])
        #expect(sent.first?.headers["Authorization"] == "Bearer secret")
        #expect(sent.last?.headers["Authorization"] == nil, "credentials stay with their origin")
        #expect(sent.last?.headers["X-Shop"] == "7")
    }

    @Test("a 307 on the same origin sends the method and body again; a 303 continues as GET without one")
    func bodyRedirects() async throws {
        let transport = AppTransport { request in
            switch request.url.path {
            case "/v1/orders": Self.answer(307, ["Location": "/v1/orders-2"])
            case "/v1/orders-2": Self.answer(303, ["Location": "/v1/receipt"])
            default: .json(#"{"code":0,"data":1}"#)
            }
        }
        _ = try await Self.client(transport).send(Endpoint<Int>.post("orders", body: .json(["tea": 2])))

        let sent = transport.requests
        #expect(sent.map(\.url.path) == ["/v1/orders", "/v1/orders-2", "/v1/receipt"])
        #expect(sent.map(\.method) == [.post, .post, .get])
        #expect(sent[1].body == sent[0].body && sent[0].body != .none)
        #expect(sent[2].body == .none)
    }

    @Test("a redirect loop ends after 10 redirects with a transport error")
    func redirectLoop() async throws {
        let transport = AppTransport { _ in Self.answer(302, ["Location": "/v1/again"]) }
        let error = await networkError { _ = try await Self.client(transport).send(Endpoint<Int>.get("again")) }
        #expect(error?.code == .transport)
        #expect(transport.requests.count == 11)
    }

    @Test("a body past the endpoint's limit fails with responseTooLarge")
    func bodyLimit() async throws {
        let transport = AppTransport { _ in Self.answer(200, body: String(repeating: "x", count: 2_000)) }
        let client = Self.client(transport)
        let error = await networkError {
            _ = try await client.send(Endpoint<String>.get("big", decoding: .text).maximumResponseBodySize(1_000))
        }
        #expect(error?.code == .responseTooLarge)
        #expect(try await client.send(Endpoint<String>.get("big", decoding: .text)).count == 2_000)
    }

    @Test("a successful download's body is held to the download's own limit, not the client's")
    func downloadLimit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let transport = AppTransport { _ in Self.answer(200, body: String(repeating: "x", count: 2_000)) }
        let client = Self.client(transport, limit: 1_000)
        let file = try await client.download(.download("report"), to: directory.file("report.txt")).value
        #expect(file.byteCount == 2_000)
        let limited = await networkError {
            _ = try await client.download(
                DownloadEndpoint.download("report").maximumResponseBodySize(1_500), to: directory.file("other.txt")
            ).value
        }
        #expect(limited?.code == .responseTooLarge)
    }

    @Test("an answer a transport finishes after the deadline, ignoring its cancellation, is timedOut")
    func answerAfterTheDeadline() async throws {
        let transport = AppTransport { _ in
            try? await Task.sleep(for: .seconds(600))
            return .json(#"{"code":0,"data":1}"#)
        }
        let error = await networkError {
            _ = try await Self.client(transport, timeout: .milliseconds(200)).send(Endpoint<Int>.get("slow"))
        }
        #expect(error?.code == .timedOut)
    }

    @Test("a transport that never answers is cancelled at the deadline, and the caller gets timedOut")
    func deadline() async throws {
        let transport = AppTransport { _ in
            try await Task.sleep(for: .seconds(600))
            return .json(#"{"code":0,"data":1}"#)
        }
        let started = ContinuousClock.now
        let error = await networkError {
            _ = try await Self.client(transport, timeout: .milliseconds(200)).send(Endpoint<Int>.get("slow"))
        }
        #expect(error?.code == .timedOut)
        // Far below the transport's 10 minutes; wide, since the suite's first seconds keep both
        // cores busy.
        #expect(ContinuousClock.now - started < .seconds(30) * TestTiming.scale)
        #expect(transport.cancelled == 1, "the transport's work was cancelled")
    }

    @Test("redirects share the first request's deadline: a later request gets the time left")
    func redirectsShareTheDeadline() async throws {
        let transport = AppTransport { request in
            guard request.url.path == "/v1/first" else { return .json(#"{"code":0,"data":1}"#) }
            try await Task.sleep(for: .milliseconds(300))
            return Self.answer(302, ["Location": "/v1/second"])
        }
        _ = try await Self.client(transport, timeout: .seconds(10)).send(Endpoint<Int>.get("first"))
        let timeouts = transport.requests.map(\.timeout)
        #expect(timeouts.first == .seconds(10))
        #expect(timeouts.count == 2 && timeouts[1] <= .milliseconds(9_700))
    }

    @Test("an app's transport gets a multipart form as the request carries it, on each redirect too")
    func formReachesTheTransportAsItIs() async throws {
        let transport = AppTransport { request in
            guard request.url.path == "/v1/first" else { return .json(#"{"code":0,"data":1}"#) }
            return Self.answer(307, ["Location": "/v1/second"])
        }
        var form = MultipartForm()
        // A file no test writes: the transport, not the client, would read it.
        form.append(name: "photo", fileAt: URL(fileURLWithPath: "/nonexistent/photo.jpg"))
        _ = try await Self.client(transport).send(Endpoint<Int>.post("first", body: .multipart(form)))
        let bodies = transport.requests.map(\.body)
        #expect(bodies == [.multipart(form), .multipart(form)])
    }

    @Test("a cancelled caller cancels the transport's work and gets cancelled, not timedOut")
    func cancelDuringExchange() async throws {
        let transport = AppTransport { _ in
            try await Task.sleep(for: .seconds(600))
            return .json(#"{"code":0,"data":1}"#)
        }
        #expect(try await Self.cancelledOnceSent("slow", through: transport)?.code == .cancelled)
        try await Self.eventually { transport.cancelled == 1 }
        #expect(transport.cancelled == 1)
    }

    @Test("a caller cancelled while the transport answers with a redirect sends no redirected request")
    func cancelBetweenHops() async throws {
        // The first answer comes only once the caller is cancelled, and is a redirect all the same.
        let transport = AppTransport { _ in
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            return Self.answer(302, ["Location": "/v1/next"])
        }
        #expect(try await Self.cancelledOnceSent("first", through: transport)?.code == .cancelled)
        #expect(transport.requests.map(\.url.path) == ["/v1/first"])
    }

    @Test("neither a request cancelled in a layer nor one a layer made unfit for the wire reaches the transport")
    func checkedBeforeTheTransport() async throws {
        let transport = AppTransport { _ in .json(#"{"code":0,"data":1}"#) }
        let injecting = LastLayer { $0.headers["X-Note"] = "a\r\nAuthorization: Bearer stolen" }
        let injected = await networkError {
            _ = try await Self.client(transport, interceptors: [injecting]).send(Endpoint<Int>.get("a"))
        }
        #expect(injected?.code == .invalidRequest)

        let cancelling = LastLayer { _ in withUnsafeCurrentTask { $0?.cancel() } }
        let cancelled = await networkError {
            _ = try await Self.client(transport, interceptors: [cancelling]).send(Endpoint<Int>.get("b"))
        }
        #expect(cancelled?.code == .cancelled)
        #expect(transport.requests.isEmpty)
    }

    @Test("a redirect to another scheme, or to a Location without a host, is refused")
    func badRedirects() async throws {
        for location in ["ftp://api.example.com/file", "https:///file"] {
            let transport = AppTransport { _ in Self.answer(301, ["Location": location]) }
            let error = await networkError { _ = try await Self.client(transport).send(Endpoint<Int>.get("a")) }
            #expect(error?.code == .transport, "\(location)")
            #expect(transport.requests.count == 1)
        }
    }
}
