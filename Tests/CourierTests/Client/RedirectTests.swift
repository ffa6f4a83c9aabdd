import Courier
import CourierTesting
import Foundation
import Testing

/// Courier's redirect policy over loopback: two servers are two origins (different ports).
@Suite struct RedirectTests {
    private static let secretHeaders: HTTPHeaders = [
        "Authorization": "Bearer secret-1", "token": "secret-2", "Cookie": "session=secret-3", "X-Trace": "trace-4",
        "X-KC-HMAC": "secret-5",
    ]

    @Test("credentials, and a Host set for the first origin, do not follow a redirect to another; other headers do")
    func crossOriginStripsCredentials() async throws {
        let hop = try await Self.redirectToAnotherOrigin { port in
            var headers = Self.secretHeaders
            headers["Host"] = "127.0.0.1:\(port)"
            return headers
        }
        #expect(hop.first.headers["Host"] == "127.0.0.1:\(hop.firstPort)")
        let landed = hop.landed
        #expect(landed.headers["Host"] == "127.0.0.1:\(hop.landedPort)")
        #expect(landed.headers["Authorization"] == nil)
        #expect(landed.headers["token"] == nil)
        #expect(landed.headers["Cookie"] == nil)
        #expect(landed.headers["X-KC-HMAC"] == nil)
        #expect(landed.headers["X-Trace"] == "trace-4")
    }

    @Test(
        "a header the client's redactor names secret does not follow a redirect to another origin either",
        arguments: [Redactor.standard.adding(["x-tenant"]), Redactor(names: ["x-tenant"])])
    func crossOriginStripsConfiguredNames(_ redactor: Redactor) async throws {
        // A name the standard redactor hides is dropped even when the client's does not hide it.
        let hop = try await Self.redirectToAnotherOrigin(
            configure: { $0.redactor = redactor },
            headers: { _ in ["X-Tenant": "T-1", "X-Trace": "trace-5", "X-OtpValue": "O-1"] })
        #expect(hop.first.headers["X-Tenant"] == "T-1")
        #expect(hop.landed.headers["X-Tenant"] == nil && hop.landed.headers["X-OtpValue"] == nil)
        #expect(hop.landed.headers["X-Trace"] == "trace-5")
    }

    /// What two servers received when a GET with `headers` (given the first server's port) was
    /// answered `302` to the other, which answered "landed".
    private static func redirectToAnotherOrigin(
        configure: (inout NetworkClient.Configuration) -> Void = { _ in },
        headers: (_ firstPort: Int) -> HTTPHeaders
    ) async throws -> (
        first: LoopbackServer.Request, firstPort: Int, landed: LoopbackServer.Request, landedPort: Int
    ) {
        let backend = try Backend(configure: configure)
        let other = try LoopbackServer()
        defer {
            backend.server.stop()
            other.stop()
        }
        backend.server.route("/v1/go") { _ in
            .init(status: 302, headers: ["Location": other.baseURL.absoluteString + "land"])
        }
        other.route("/land") { _ in .envelope(data: "landed") }
        let result = try await backend.client.send(
            Endpoint<String>.get("go", headers: headers(backend.server.port)))
        #expect(result == "landed")
        let first = try #require(backend.server.requests.first)
        let landed = try #require(other.requests.first)
        return (first, backend.server.port, landed, other.port)
    }

    @Test("a redirect's query goes back byte for byte; an endpoint's only where decoding would lose bytes")
    func queryKeptAsWritten() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        let query = "sig=%FF&q=a+b&flag&t=%7e"
        backend.server.route("/v1/go") { _ in .init(status: 302, headers: ["Location": "/v1/land?" + query]) }
        backend.server.route("/v1/land") { _ in .envelope(data: "landed") }
        _ = try await backend.client.send(Endpoint<String>.get("go"))
        _ = try await backend.client.send(Endpoint<String>.get("land?" + query, query: ["page": "2"]))
        let targets = backend.server.requests.filter { $0.path == "/v1/land" }.map(\.target)
        #expect(targets == ["/v1/land?" + query, "/v1/land?sig=%FF&q=a%2Bb&flag&t=~&page=2"])
    }

    @Test("credentials follow a redirect on the same origin")
    func sameOriginKeepsCredentials() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/go") { _ in .init(status: 301, headers: ["Location": "/v1/land"]) }
        backend.server.route("/v1/land") { _ in .envelope(data: "landed") }
        _ = try await backend.client.send(Endpoint<String>.get("go", headers: Self.secretHeaders))
        let landed = try #require(backend.server.requests.last)
        #expect(landed.path == "/v1/land")
        #expect(landed.headers["Authorization"] == "Bearer secret-1")
        #expect(landed.headers["token"] == "secret-2")
    }

    @Test("a 307 on the same origin keeps method and body", arguments: [307, 308])
    func temporaryRedirectKeepsBody(_ status: Int) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/old") { _ in .init(status: status, headers: ["Location": "/v1/new"]) }
        backend.server.route("/v1/new") { request in
            .envelope(data: request.method.rawValue + " " + String(decoding: request.body, as: UTF8.self))
        }
        let echoed = try await backend.client.send(
            Endpoint<String>.post("old", body: .data(Data("amount=10".utf8), contentType: "text/plain")))
        #expect(echoed == "POST amount=10")
    }

    @Test(
        "a 307 sends the multipart form it first sent, even when a file in it changed meanwhile; its temporary file goes",
        arguments: [10_000_000, 0] as [Int64])
    func temporaryRedirectSendsTheSameForm(memoryThreshold: Int64) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redirect-form-\(UUID())")
        let encoded = directory.appendingPathComponent("encoded")
        try FileManager.default.createDirectory(at: encoded, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let part = directory.appendingPathComponent("note.txt")
        try Data("first version".utf8).write(to: part)
        var form = MultipartForm()
        form.append(name: "note", fileAt: part, contentType: "text/plain")
        form.memoryThreshold = memoryThreshold
        form.temporaryDirectory = encoded
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/old") { _ in
            try? Data("second version".utf8).write(to: part)
            return .init(status: 307, headers: ["Location": "/v1/new"])
        }
        backend.server.route("/v1/new") { request in .envelope(data: String(decoding: request.body, as: UTF8.self)) }

        let landed = try await backend.client.send(Endpoint<String>.post("old", body: .multipart(form)))
        #expect(landed.contains("first version") && !landed.contains("second version"), "\(landed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: encoded.path).isEmpty)
    }

    @Test("a form sent and redirected keeps its type and boundary when a layer set another Content-Type")
    func formKeepsItsBoundary() async throws {
        let backend = try Backend(configure: { $0.interceptors = [.headers(["Content-Type": "application/json"])] })
        defer { backend.server.stop() }
        backend.server.route("/v1/old") { _ in .init(status: 308, headers: ["Location": "/v1/new"]) }
        backend.server.route("/v1/new") { request in
            .envelope(data: request.multipartParts?.map(\.text).joined() ?? "none")
        }
        var form = MultipartForm()
        form.append(name: "note", value: "kept")
        #expect(try await backend.client.send(Endpoint<String>.post("old", body: .multipart(form))) == "kept")
    }

    @Test("a 307 to another origin is not followed, so the body is neither lost nor leaked")
    func crossOriginTemporaryRedirectStops() async throws {
        let backend = try Backend()
        let other = try LoopbackServer()
        defer {
            backend.server.stop()
            other.stop()
        }
        backend.server.route("/v1/pay") { _ in
            .init(status: 307, headers: ["Location": other.baseURL.absoluteString + "pay"])
        }
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<String>.post("pay", body: .form(["password": "p"])))
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 307)
        #expect(other.requests.isEmpty)
    }

    @Test(
        "a PUT or PATCH answered 301 or 302 on the same origin keeps its method and body",
        arguments: [HTTPMethod.put, .patch], [301, 302])
    func movedKeepsBody(_ method: HTTPMethod, _ status: Int) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/old") { _ in .init(status: status, headers: ["Location": "/v1/new"]) }
        backend.server.route("/v1/new") { request in
            .envelope(data: request.method.rawValue + " " + String(decoding: request.body, as: UTF8.self))
        }
        let endpoint = Endpoint<String>(
            method: method, path: "old", body: .data(Data("name=new".utf8), contentType: "text/plain"),
            decoding: .envelope)
        let echoed = try await backend.client.send(endpoint)
        #expect(echoed == "\(method.rawValue) name=new")
    }

    @Test(
        "a redirect that is not to an http or https URL fails and sends nothing more",
        arguments: ["file:///etc/passwd", "ftp://127.0.0.1/etc/passwd", "http://", "http:///etc/passwd"])
    func onlyHTTPRedirects(_ location: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/go") { _ in .init(status: 302, headers: ["Location": location]) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("go")) }
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(backend.server.requests.map(\.path) == ["/v1/go"])
    }

    @Test("a redirected request that runs out of the first request's deadline says that deadline, not the time left")
    func redirectTimeoutNamesTheDeadline() async throws {
        let backend = try Backend(timeout: .seconds(2))
        defer { backend.server.stop() }
        backend.server.route("/v1/go") { _ in
            LoopbackServer.Response(status: 302, headers: ["Location": "/v1/slow"]).delayed(by: .milliseconds(600))
        }
        backend.server.route("/v1/slow") { _ in .envelope(data: "late").delayed(by: .seconds(60)) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("go")) }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "No complete answer within 2.0 seconds.", "\(String(describing: error))")
    }

    @Test("a redirected request that runs out of time in its body keeps the head that arrived")
    func redirectTimeoutKeepsTheHead() async throws {
        // Long enough for the head to arrive in the suite's busy first seconds; the body never
        // does (a byte every half second, for ten times as long).
        let timeout = Duration.seconds(6) * TestTiming.scale
        let backend = try Backend(timeout: timeout)
        defer { backend.server.stop() }
        backend.server.route("/v1/go") { _ in .init(status: 302, headers: ["Location": "/v1/slow"]) }
        backend.server.route("/v1/slow") { _ in
            LoopbackServer.Response.text(
                String(repeating: "a", count: 120 * TestTiming.scale), contentType: "application/json"
            )
            .with(.drip(bytes: 1, every: .milliseconds(500)))
        }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("go")) }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "No complete answer within \(timeout).", "\(String(describing: error))")
        #expect(error?.status == 200)
        #expect(error?.headers?["Content-Type"] == "application/json")
    }

    @Test("a redirect loop ends after 10 redirects")
    func loop() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .init(status: 302, headers: ["Location": "/v1/b"]) }
        backend.server.route("/v1/b") { _ in .init(status: 302, headers: ["Location": "/v1/a"]) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("a")) }
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(backend.server.requests.count == 11, "the request and 10 redirects")
    }

    @Test("a 3xx without Location is the answer")
    func noLocation() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/go") { _ in .init(status: 302) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("go")) }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 302)
    }
}
