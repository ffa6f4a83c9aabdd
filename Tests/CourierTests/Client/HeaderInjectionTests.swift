import Courier
import CourierTesting
import Foundation
import Testing

/// No value that reaches the request head (a token, a computed header, a signing header, a
/// custom layer's header, the method) can add a header or a line: the transport refuses the
/// request with invalidRequest and nothing reaches the server.
@Suite struct HeaderInjectionTests {
    static let hostileValues = ["abc\r\nX-Injected: 1", "abc\nX-Injected: 1", "abc\rX", "abc\u{0}", "abc\u{7F}"]

    /// A server that answers every request; the tests check it received none.
    static func backend(_ interceptors: [any Interceptor], session: Session? = nil) throws -> FaultBackend {
        let answer: [FaultServer.Step] = [
            .readRequest, .respond(headers: ["Content-Type": "application/json"], body: Data(#"{"code":0}"#.utf8)),
        ]
        return try FaultBackend(
            configure: {
                $0.interceptors = interceptors
                $0.session = session
            }, answer)
    }

    /// A session whose stored token expires now, and whose refresh gives `token`.
    static func refreshing(to token: @escaping @Sendable () -> String, placement: Session.TokenPlacement) -> Session {
        Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old", expiresAt: Date())),
            placement: placement, refresh: { _ in Credential(accessToken: token()) })
    }

    /// - Parameter value: Whether the hostile text is a field value, which an error never shows
    ///   (a name or method is shown escaped, so a log line stays one line).
    static func expectRefused(
        _ backend: FaultBackend, _ endpoint: Endpoint<EmptyResponse> = .get("x"), value: Bool = true
    ) async {
        let error = await networkError { _ = try await backend.client.send(endpoint) }
        #expect(error?.code == .invalidRequest, "\(String(describing: error))")
        let description = error?.description ?? ""
        #expect(!description.contains("\r") && !description.contains("\n"))
        if value { #expect(!description.contains("X-Injected"), "a value is never shown") }
        // Give a request that did go out time to arrive before asserting that none did.
        #expect(await !backend.server.waitUntil(timeout: .milliseconds(200)) { !$0.connections.isEmpty })
        #expect(backend.server.requestHeads.isEmpty)
    }

    @Test("a token with CR LF from the store", arguments: hostileValues)
    func tokenFromStore(value: String) async throws {
        let backend = try Self.backend(
            [], session: Session(store: InMemoryTokenStore(credential: Credential(accessToken: value))))
        defer { backend.server.stop() }
        await Self.expectRefused(backend)
    }

    @Test("a bearer token with CR LF from a refresh", arguments: hostileValues)
    func bearerFromFetch(value: String) async throws {
        let backend = try Self.backend([], session: Self.refreshing(to: { value }, placement: .bearer))
        defer { backend.server.stop() }
        await Self.expectRefused(backend)
    }

    @Test("a common header with CR LF, fixed or computed", arguments: hostileValues)
    func commonHeader(value: String) async throws {
        for layer in [HeadersInterceptor(["X-App": value]), HeadersInterceptor { _ in ["X-App": value] }] {
            let backend = try Self.backend([layer])
            defer { backend.server.stop() }
            await Self.expectRefused(backend)
        }
    }

    @Test("a signing header name with CR LF")
    func signingHeader() async throws {
        let placement = SigningInterceptor.Placement.headers(signature: "X-Sign\r\nX-Injected: 1")
        let backend = try Self.backend([.signing(.hmacSHA256(secret: Data("k".utf8)), placement: placement)])
        defer { backend.server.stop() }
        await Self.expectRefused(backend, value: false)
    }

    @Test("a custom layer's header name or value, and its method")
    func customLayer() async throws {
        struct Hostile: Interceptor {
            let change: @Sendable (inout HTTPRequest) -> Void
            var layer: InterceptorLayer { "hostile" }
            func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> HTTPResponse
            {
                var request = request
                change(&request)
                return try await next(request)
            }
        }
        let changes: [@Sendable (inout HTTPRequest) -> Void] = [
            { $0.headers["X-Trace"] = "1\r\nX-Injected: 1" },
            { $0.headers.append(name: "X-Injected: 1\r\nX-Trace", value: "1") },
            { $0.headers.append(name: "Bad Name", value: "1") },
            { $0.method = HTTPMethod("GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET") },
            { $0.method = HTTPMethod("") },
        ]
        for (index, change) in changes.enumerated() {
            let backend = try Self.backend([Hostile(change: change)])
            defer { backend.server.stop() }
            await Self.expectRefused(backend, value: index == 0)
        }
    }

    @Test("an endpoint header with CR LF fails before any layer runs")
    func endpointHeader() async throws {
        let fetches = Counter()
        let backend = try Self.backend(
            [], session: Self.refreshing(to: { "t\(fetches.increment())" }, placement: .header("token")))
        defer { backend.server.stop() }
        await Self.expectRefused(backend, .get("x", headers: ["X-Trace": "1\r\nX-Injected: 1"]))
        #expect(fetches.increment() == 1, "the token was never refreshed")
    }

    @Test("a body's media type with CR LF, in memory or from a file")
    func bodyMediaType() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("avatar.png")
        try Data("png".utf8).write(to: file)
        let hostile = "image/png\r\nX-Injected: 1"
        let bodies: [RequestBody] = [.data(Data("png".utf8), contentType: hostile), .file(file, contentType: hostile)]
        for body in bodies {
            let backend = try Self.backend([])
            defer { backend.server.stop() }
            await Self.expectRefused(backend, .put("avatar", body: body))
        }
    }

    /// Fields that frame the message: one that lies makes the server read part of the body as
    /// a request of its own.
    static let framingFields: [(String, String)] = [
        ("Content-Length", "1"), ("Transfer-Encoding", "chunked"), ("connection", "close"), ("TE", "trailers"),
        ("Upgrade", "h2c"),
    ]

    @Test("a field that frames the message, from the endpoint or a layer", arguments: 0..<5)
    func framingField(_ index: Int) async throws {
        let (name, value) = Self.framingFields[index]
        let smuggled = Data("aGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let smuggling = RequestBody.data(smuggled, contentType: "text/plain")
        let fromEndpoint = try Self.backend([])
        defer { fromEndpoint.server.stop() }
        await Self.expectRefused(fromEndpoint, .post("x", body: smuggling, headers: [name: value]), value: false)
        let fromLayer = try Self.backend([.headers([name: value])])
        defer { fromLayer.server.stop() }
        await Self.expectRefused(fromLayer, .post("x", body: smuggling), value: false)
    }

    @Test("an empty value is sent as an empty field, not dropped")
    func emptyValue() async throws {
        let backend = try Self.backend([.headers(["X-Empty": ""])])
        defer { backend.server.stop() }
        _ = try await backend.client.send(Endpoint<EmptyResponse>.get("x"))
        #expect(backend.server.requestHeads.first?.headers["X-Empty"] == "")
    }

    @Test("a tab and non-ASCII text in a value are sent as they are")
    func allowedValue() async throws {
        let backend = try Self.backend([.headers(["X-Note": "a\tb Grüße"])])
        defer { backend.server.stop() }
        _ = try await backend.client.send(Endpoint<EmptyResponse>.get("x"))
        #expect(backend.server.requestHeads.first?.headers["X-Note"] == "a\tb Grüße")
    }
}
