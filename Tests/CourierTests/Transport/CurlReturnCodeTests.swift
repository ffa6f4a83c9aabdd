#if os(Linux)
    import CCurl
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// Every libcurl return code is checked: a refused option or a transfer libcurl will not take
    /// ends in a clear error with nothing sent (or in a safe fallback), never in a request sent
    /// other than asked, and never in a caller left waiting.
    @Suite struct CurlReturnCodeTests {
        static let answer: [FaultServer.Step] = [
            .readRequest, .respond(headers: ["Content-Type": "text/plain"], body: Data("hello".utf8)),
        ]

        /// Sends a GET through a transport with `faults`; returns the answer's status or the error.
        static func send(
            _ faults: CurlFaults, tls: TLSOptions = TLSOptions(), to server: FaultServer
        ) async throws -> Result<Int, NetworkError> {
            let transport = try CurlTransport(options: .init(tls: tls), faults: faults)
            var request = HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("x"))
            // Only ends a hang: longer than any wait below, so a caller answered at its deadline
            // rather than at once shows.
            request.timeout = .seconds(60) * TestTiming.scale
            do {
                return .success(try await transport.send(request).status)
            } catch let error as NetworkError {
                #expect(transport.activeTransferCount == 0)
                return .failure(error)
            }
        }

        @Test("a libcurl older than 7.85 (no PROTOCOLS_STR) is limited to http and https the old way")
        func protocolsFallback() async throws {
            let server = try FaultServer(Self.answer)
            defer { server.stop() }
            let unknownOption = Int32(COURIER_CURLE_UNKNOWN_OPTION)
            let old = CurlFaults(refusedOptions: [Int32(COURIER_CURLOPT_PROTOCOLS_STR): unknownOption])
            let sent = try await Self.send(old, to: server)
            #expect((try? sent.get()) == 200, "\(sent)")

            var neither = old
            neither.refusedOptions[Int32(COURIER_CURLOPT_PROTOCOLS)] = unknownOption
            let refused = try await Self.send(neither, to: server)
            #expect((try? refused.get()) == nil && refused.error?.code == .transport, "\(refused)")
            #expect(server.connections.count == 1, "the second request was never sent")
        }

        @Test(
            "a libcurl that cannot pin or load the authorities fails closed with tls; nothing is sent",
            arguments: [COURIER_CURLOPT_PINNEDPUBLICKEY, COURIER_CURLOPT_CAINFO])
        func tlsFailsClosed(option: Int) async throws {
            let server = try FaultServer(Self.answer)
            defer { server.stop() }
            let notBuiltIn: Int32 = 4
            let faults = CurlFaults(refusedOptions: [Int32(option): notBuiltIn])
            let tls = TLSOptions(
                certificateAuthorities: URL(fileURLWithPath: "/dev/null"), pinnedPublicKeys: ["*": ["pin"]])

            let result = try await Self.send(faults, tls: tls, to: server)

            #expect(result.error?.code == .tls, "\(result)")
            #expect(server.connections.isEmpty)
        }

        @Test("any other refused option fails the request before anything is sent")
        func refusedOption() async throws {
            let server = try FaultServer(Self.answer)
            defer { server.stop() }
            let badArgument: Int32 = 43
            let result = try await Self.send(
                CurlFaults(refusedOptions: [Int32(COURIER_CURLOPT_TIMEOUT_MS): badArgument]), to: server)
            #expect(result.error?.code == .transport, "\(result)")
            #expect(server.connections.isEmpty)
        }

        @Test("a transfer the multi handle will not take answers its caller at once")
        func addHandleFails() async throws {
            let server = try FaultServer(Self.answer)
            defer { server.stop() }
            let badEasyHandle: Int32 = 2
            // The limit only ends a wait for an answer that never comes (a loaded machine can be
            // seconds late with one that does).
            let outcome = await result(within: .seconds(30) * TestTiming.scale) {
                try? await Self.send(CurlFaults(addHandleResult: badEasyHandle), to: server)
            }
            #expect(outcome??.error?.code == .transport, "\(String(describing: outcome))")
            #expect(server.connections.isEmpty)
        }
    }

    extension Result {
        fileprivate var error: Failure? {
            if case .failure(let error) = self { error } else { nil }
        }
    }
#endif
