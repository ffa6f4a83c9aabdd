import Courier
import CourierTesting
import Foundation
import Testing

/// A layer that records its name on the way in and out, for order tests.
private struct Tracer: Interceptor {
    let name: String
    let log: Log

    var layer: InterceptorLayer { InterceptorLayer(rawValue: name) }

    func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        log.append("in:\(name)")
        var request = request
        request.headers.append(name: "X-Trace", value: name)
        let response = try await next(request)
        log.append("out:\(name)")
        return response
    }
}

@Suite struct InterceptorChainTests {
    @Test("layers run outermost first on the way in and in reverse on the way out")
    func order() async throws {
        let log = Log()
        let transport = MockTransport { request in
            log.append(
                "transport:"
                    + request.headers.fields.filter { $0.name == "X-Trace" }.map(\.value).joined(separator: ","))
            return .json(#"{"code":0}"#)
        }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!,
                interceptors: [Tracer(name: "a", log: log), Tracer(name: "b", log: log), Tracer(name: "c", log: log)],
                transport: transport))
        _ = try await client.send(Endpoint<EmptyResponse>.get("x"))
        #expect(log.all == ["in:a", "in:b", "in:c", "transport:a,b,c", "out:c", "out:b", "out:a"])
    }

    @Test("an endpoint can opt out of a layer")
    func skipping() async throws {
        let log = Log()
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!,
                interceptors: [Tracer(name: "a", log: log), Tracer(name: "token", log: log)],
                transport: MockTransport { _ in .json(#"{"code":0}"#) }))
        _ = try await client.send(Endpoint<EmptyResponse>.get("token").skipping(.token))
        #expect(log.all == ["in:a", "out:a"])
    }

    @Test("a layer can answer without calling next, and can call next again (a retry re-runs inner layers)")
    func shortCircuitAndRetry() async throws {
        struct Cache: Interceptor {
            var layer: InterceptorLayer { "cache" }
            func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> HTTPResponse
            {
                request.url.path.hasSuffix("cached")
                    ? .json(#"{"code":0,"data":"from cache"}"#) : try await next(request)
            }
        }
        struct TwiceOnFailure: Interceptor {
            var layer: InterceptorLayer { "again" }
            func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
                -> HTTPResponse
            {
                let first = try await next(request)
                return first.status == 503 ? try await next(request) : first
            }
        }
        let backend = try Backend {
            $0.interceptors = [Cache(), TwiceOnFailure(), .signing(.hmacSHA256(secret: Data("k".utf8)))]
        }
        defer { backend.server.stop() }
        let attempts = Log()
        backend.server.route("/v1/flaky") { request in
            attempts.append(request.query["nonce"] ?? "")
            return attempts.all.count == 1 ? .init(status: 503) : .envelope(data: "ok")
        }
        #expect(try await backend.client.send(Endpoint<String>.get("cached")) == "from cache")
        #expect(backend.server.requests.isEmpty)
        #expect(try await backend.client.send(Endpoint<String>.get("flaky")) == "ok")
        #expect(attempts.all.count == 2)
        #expect(Set(attempts.all).count == 2, "each attempt is signed afresh")
    }

    @Test("the context reads business codes from envelopes")
    func businessCode() {
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: EnvelopeFormat(codeKey: "result"),
                transport: MockTransport { _ in .init(status: 204) }))
        let context = InterceptorContext(client: client)
        #expect(context.businessCode(in: .json(#"{"result":"99"}"#)) == 99)
        #expect(context.businessCode(in: .json(#"{"code":99}"#)) == nil)
        #expect(context.businessCode(in: HTTPResponse(status: 200, body: Data("<html>".utf8))) == nil)
        // The code BaseModel reads, whatever else the body holds (a message that is not UTF-8:
        // found by the fuzz target), so the re-login layer sees the 99 the caller would get.
        var body = Data(#"{"result":99,"msg":"bad "#.utf8)
        body.append(contentsOf: [0xEF, 0x6B])
        body.append(contentsOf: Data(#""}"#.utf8))
        #expect(context.businessCode(in: HTTPResponse(status: 200, body: body)) == 99)
    }
}
