#if os(Linux)
    import Courier
    import CourierTesting
    import Foundation
    import Testing

    /// WebSockets over TLS (`wss`) against the `websockets` Python library with a certificate
    /// from an authority made for the test: the connection libcurl opens carries the transport's
    /// authorities and pins, and frames stay whole when OpenSSL cannot take one at once.
    @Suite(.serialized, .enabled(if: WebSocketPeer.available, "needs python3-websockets (.ci/run installs it)"))
    struct WebSocketSecureTests {
        private static func client(_ server: WebSocketServerPeer, tls: TLSOptions) throws -> NetworkClient {
            NetworkClient(
                configuration: .init(
                    baseURL: server.baseURL, timeout: .seconds(20) * TestTiming.scale,
                    transport: try CurlTransport(options: .init(tls: tls))))
        }

        private struct Count: Decodable, Equatable {
            let senders: [Int]
            let broken: Int
        }

        @Test(
            "over TLS, messages sent by many tasks at once arrive whole and in order while the server pings after each")
        func concurrentSenders() async throws {
            let server = try await WebSocketServerPeer(secure: true)
            defer { server.stop() }
            let client = try Self.client(server, tls: TLSOptions(certificateAuthorities: server.authorityFile))
            let socket = try await client.webSocket(.webSocket("count"))
            let (senders, each, size) = (4, 200, 64_000)
            try await socket.sendNumbered(senders: senders, each: each, size: size)
            try await socket.send(.text("done"))
            var messages = socket.messages.makeAsyncIterator()
            guard case .text(let json) = try await messages.next() else {
                Issue.record("the server sent no count")
                return
            }
            #expect(
                try JSONDecoder().decode(Count.self, from: Data(json.utf8))
                    == Count(senders: [each, each, each, each], broken: 0))
            await socket.close()
        }

        @Test("over TLS, an authority the client does not trust and a pin that does not match are refused")
        func refused() async throws {
            let server = try await WebSocketServerPeer(secure: true)
            defer { server.stop() }
            let wrongPin = Data(repeating: 7, count: 32).base64EncodedString()
            for tls in [
                TLSOptions(),
                TLSOptions(certificateAuthorities: server.authorityFile, pinnedPublicKeys: ["127.0.0.1": [wrongPin]]),
            ] {
                let error = await #expect(throws: NetworkError.self) {
                    try await Self.client(server, tls: tls).webSocket(.webSocket("echo"))
                }
                #expect(error?.code == .tls)
            }
        }
    }
#endif
