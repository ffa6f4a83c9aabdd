import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Cookies behave alike on both transports: what a server sets is kept in memory for the
/// transport's life and sent back to it.
@Suite struct CookieTests {
    /// A server whose `/v1/login` sets `session=abc` and whose `/v1/me` answers with the
    /// `Cookie` header it received (`none` without one).
    private func cookieServer() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("/v1/login") { _ in
            LoopbackServer.Response(
                headers: ["Content-Type": "application/json", "Set-Cookie": "session=abc; Path=/; HttpOnly"],
                body: Data(#"{"code":0,"msg":"ok","data":null}"#.utf8))
        }
        server.route("/v1/me") { request in .envelope(data: request.headers["Cookie"] ?? "none") }
        return server
    }

    private func client(_ server: LoopbackServer, _ transport: (any Transport)?) -> NetworkClient {
        NetworkClient(
            configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: transport))
    }

    @Test("a cookie the server sets is sent back on the next request")
    func keptAndSentBack() async throws {
        let server = try cookieServer()
        defer { server.stop() }
        let client = client(server, TestTransport.make())

        #expect(try await client.send(Endpoint<String>.get("me")) == "none")
        _ = try await client.send(Endpoint<EmptyResponse>.get("login"))
        #expect(try await client.send(Endpoint<String>.get("me")) == "session=abc")
    }

    #if os(Linux)
        @Test("each CurlTransport has its own jar")
        func jarPerTransport() async throws {
            let server = try cookieServer()
            defer { server.stop() }
            let first = client(server, try CurlTransport())
            let second = client(server, try CurlTransport())

            _ = try await first.send(Endpoint<EmptyResponse>.get("login"))

            #expect(try await first.send(Endpoint<String>.get("me")) == "session=abc")
            #expect(try await second.send(Endpoint<String>.get("me")) == "none")
        }

        @Test("keepsCookies: false sends none back")
        func jarOff() async throws {
            let server = try cookieServer()
            defer { server.stop() }
            let client = client(server, try CurlTransport(options: .init(keepsCookies: false)))

            _ = try await client.send(Endpoint<EmptyResponse>.get("login"))

            #expect(try await client.send(Endpoint<String>.get("me")) == "none")
        }

        /// Linux URLSession replaces such a header with its stored cookies (see
        /// URLSessionTransport); libcurl would send both.
        @Test("a request with its own Cookie header sends exactly that header")
        func ownCookieHeader() async throws {
            let server = try cookieServer()
            defer { server.stop() }
            let client = client(server, try CurlTransport())
            _ = try await client.send(Endpoint<EmptyResponse>.get("login"))

            let sent = try await client.send(Endpoint<String>.get("me", headers: ["Cookie": "mine=1"]))

            #expect(sent == "mine=1")
            #expect(server.requests.last?.headers.fields.filter { $0.name.lowercased() == "cookie" }.count == 1)
        }
    #endif
}
