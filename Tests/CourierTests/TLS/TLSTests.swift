#if os(Linux)
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// CurlTransport against a real TLS server on loopback (openssl s_server) whose certificate
    /// comes from a certificate authority made by the test.
    @Suite(.serialized) struct TLSTests {
        private func fetch(_ server: TLSServer, tls: TLSOptions) async -> Result<Int, NetworkError> {
            do {
                let transport = try CurlTransport(options: .init(tls: tls))
                let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))
                let response = try await client.send(
                    Endpoint<HTTPResponse>(method: .get, path: "", decoding: .response))
                return .success(response.status)
            } catch {
                return .failure(error)
            }
        }

        @Test("an unknown certificate authority is refused by default")
        func refusedByDefault() async throws {
            let server = try await TLSServer.start()
            defer { server.stop() }

            let result = await fetch(server, tls: TLSOptions())

            guard case .failure(let error) = result else {
                Issue.record("the handshake succeeded")
                return
            }
            #expect(error.code == .tls)
        }

        @Test("a custom certificate authority is trusted")
        func customAuthority() async throws {
            let server = try await TLSServer.start()
            defer { server.stop() }

            let result = await fetch(server, tls: TLSOptions(certificateAuthorities: server.authorityFile))

            #expect(try result.get() == 200)
        }

        @Test("a matching public-key pin is accepted; a mismatch is refused even with a trusted chain")
        func pinning() async throws {
            let server = try await TLSServer.start()
            defer { server.stop() }
            let wrongPin = Data(repeating: 7, count: 32).base64EncodedString()

            let matching = await fetch(
                server,
                tls: TLSOptions(
                    certificateAuthorities: server.authorityFile, pinnedPublicKeys: ["127.0.0.1": [server.publicKeyPin]]
                ))
            let mismatched = await fetch(
                server,
                tls: TLSOptions(
                    certificateAuthorities: server.authorityFile, pinnedPublicKeys: ["127.0.0.1": [wrongPin]]))
            let oneOfTwo = await fetch(
                server,
                tls: TLSOptions(
                    certificateAuthorities: server.authorityFile,
                    pinnedPublicKeys: ["127.0.0.1": [wrongPin, server.publicKeyPin]]))

            #expect(try matching.get() == 200)
            #expect(try oneOfTwo.get() == 200, "any one of several pins (key rotation)")
            guard case .failure(let error) = mismatched else {
                Issue.record("a wrong pin was accepted")
                return
            }
            #expect(error.code == .tls)
            #expect(error.message.contains("pin"))
        }

        @Test("pins are per host: another host's pins, an exempting empty list and no match leave a host unpinned")
        func pinsPerHost() async throws {
            let server = try await TLSServer.start()
            defer { server.stop() }
            let wrongPin = Data(repeating: 7, count: 32).base64EncodedString()
            func fetch(_ pins: [String: [String]]) async -> Result<Int, NetworkError> {
                await self.fetch(
                    server, tls: TLSOptions(certificateAuthorities: server.authorityFile, pinnedPublicKeys: pins))
            }

            let otherHost = await fetch(["api.example.com": [wrongPin], "*.example.com": [wrongPin]])
            let exempted = await fetch(["*": [wrongPin], "127.0.0.1": []])
            let everyHost = await fetch(["*": [wrongPin]])
            let exactOverEvery = await fetch(["*": [wrongPin], "127.0.0.1": [server.publicKeyPin]])
            let malformed = await fetch(["api.*.example.com": [server.publicKeyPin]])

            #expect(try otherHost.get() == 200)
            #expect(try exempted.get() == 200)
            #expect(try exactOverEvery.get() == 200)
            #expect(everyHost.failure?.code == .tls, "\(everyHost)")
            #expect(malformed.failure?.code == .invalidRequest, "\(malformed)")
        }

        @Test("URLSessionTransport on Linux refuses TLS options it cannot check instead of ignoring them")
        func urlSessionRefusesUncheckedOptions() async throws {
            let server = try await TLSServer.start()
            defer { server.stop() }
            let transport = URLSessionTransport(tls: TLSOptions(pinnedPublicKeys: ["127.0.0.1": [server.publicKeyPin]]))
            let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))

            let error = await networkError {
                _ = try await client.send(
                    Endpoint<HTTPResponse>(method: .get, path: "", decoding: .response)
                        .sharingIdenticalRequests(false))
            }

            #expect(error?.code == .tls)
            #expect(error?.message.contains("CurlTransport") == true)
        }

        @Test("URLSessionTransport on Linux refuses an http to https redirect when TLS options are set")
        func urlSessionRefusesUncheckedRedirect() async throws {
            // Any listener will do as the https side: nothing may connect to it.
            let secure = try FaultServer([.waitForHangUp])
            let plain = try LoopbackServer()
            defer {
                secure.stop()
                plain.stop()
            }
            plain.route("/go") { _ in .init(status: 302, headers: ["Location": "https://127.0.0.1:\(secure.port)/"]) }
            let transport = URLSessionTransport(tls: TLSOptions(pinnedPublicKeys: ["*": ["sha256//wrong"]]))
            let client = NetworkClient(configuration: .init(baseURL: plain.baseURL, transport: transport))

            let error = await networkError {
                _ = try await client.send(Endpoint<HTTPResponse>(method: .get, path: "go", decoding: .response))
            }

            #expect(error?.code == .tls, "\(String(describing: error))")
            #expect(secure.connections.isEmpty, "nothing went to the https server")
        }

        @Test(
            "HTTP/2 is used over TLS when the server offers it",
            .enabled(if: TLSServer.nginxAvailable, "needs nginx (.ci/run installs it)"))
        func http2() async throws {
            let server = try await TLSServer.start(.nginx)
            defer { server.stop() }
            let transport = try CurlTransport(
                options: .init(tls: TLSOptions(certificateAuthorities: server.authorityFile)))
            let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))

            let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await client.send(
                            Endpoint<HTTPResponse>(method: .get, path: "", decoding: .response)
                                .sharingIdenticalRequests(false))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            #expect(responses.allSatisfy { $0.httpVersion == "2" && $0.status == 200 })
            #expect(responses.allSatisfy { $0.body == Data("hello over TLS".utf8) })
            #expect(responses.contains { $0.timings.map { $0.tlsHandshake > .zero } == true })
        }

        @Test(
            "Requests sent at once to an HTTP/2 server share one connection",
            .enabled(if: TLSServer.nginxAvailable, "needs nginx (.ci/run installs it)"))
        func http2SharesOneConnection() async throws {
            let server = try await TLSServer.start(.nginx)
            defer { server.stop() }
            let transport = try CurlTransport(
                options: .init(tls: TLSOptions(certificateAuthorities: server.authorityFile)))
            let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))

            // More than nginx lets one connection carry (128 streams). Without the wait for the
            // first connection, each would open its own, up to 16; without the line's 100 at
            // once per HTTPS origin, those past the server's limit would.
            let versions = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<256 {
                    group.addTask {
                        try await client.send(
                            Endpoint<HTTPResponse>(method: .get, path: "", decoding: .response)
                                .sharingIdenticalRequests(false)
                        ).httpVersion
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            #expect(versions.count == 256 && versions.allSatisfy { $0 == "2" })
            #expect(try server.connectionsAnswered() == 1)
        }
    }
#endif

extension Result {
    /// The error of a failure, or `nil`.
    var failure: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}
