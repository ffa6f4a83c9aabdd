#if os(Linux)
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// CurlTransport reuses the easy handles of ended transfers: a reused handle sends exactly
    /// the request it is given, nothing of the one before, and one attached to the cookie jar
    /// never carries the jar's cookies to a request that sends its own.
    @Suite struct CurlHandleReuseTests {
        /// A server that answers every request with the method, the `X-Trace` header and the
        /// body length it received.
        private func echoServer() throws -> LoopbackServer {
            let server = try LoopbackServer()
            server.route("/v1/echo") { request in
                // Long enough that every request of a burst is in flight at once.
                try? await Task.sleep(for: .milliseconds(20))
                let trace = request.headers["X-Trace"] ?? "none"
                return .envelope(data: "\(request.method.rawValue) \(trace) \(request.body.count)")
            }
            return server
        }

        /// The kept handles once the loop has let go of the last ended transfer (it does so just
        /// after answering its caller).
        private func keptHandles(_ transport: CurlTransport, settlingAt expected: Int) async throws -> Int {
            let deadline = ContinuousClock.now + .seconds(5) * TestTiming.scale
            while transport.keptHandleCount != expected, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            return transport.keptHandleCount
        }

        @Test("a reused handle sends its own request: no method, header or body of the one before")
        func nothingCarriedOver() async throws {
            let server = try echoServer()
            defer { server.stop() }
            let transport = try CurlTransport(options: .init(keepsCookies: false))
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: transport))

            let put = try await client.send(
                Endpoint<String>.put("echo", body: .json(["name": "x"]), headers: ["X-Trace": "first"]))
            #expect(put == "PUT first 12")
            #expect(try await keptHandles(transport, settlingAt: 1) == 1)

            let got = try await client.send(Endpoint<String>.get("echo"))

            #expect(got == "GET none 0")
            #expect(try await keptHandles(transport, settlingAt: 1) == 1)
        }

        @Test("handles kept with the cookie jar never go to a request with its own Cookie header")
        func jarHandlesStayWithTheJar() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/v1/login") { _ in
                LoopbackServer.Response(
                    headers: ["Content-Type": "application/json", "Set-Cookie": "session=abc; Path=/"],
                    body: Data(#"{"code":0,"msg":"ok","data":null}"#.utf8))
            }
            server.route("/v1/me") { request in .envelope(data: request.headers["Cookie"] ?? "none") }
            let transport = try CurlTransport()
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: transport))
            _ = try await client.send(Endpoint<EmptyResponse>.get("login"))

            for round in 0..<3 {
                #expect(try await client.send(Endpoint<String>.get("me")) == "session=abc")
                let own = try await client.send(Endpoint<String>.get("me", headers: ["Cookie": "mine=\(round)"]))
                #expect(own == "mine=\(round)")
            }
            // Both kinds were kept and reused (how many of each depends on when the loop let go
            // of each transfer: a handle given back late means a new one for the next request).
            let deadline = ContinuousClock.now + .seconds(5) * TestTiming.scale
            while transport.givenHandleCount < 7, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(transport.givenHandleCount == 7)
            #expect(transport.keptHandleCount >= 2)
        }

        @Test("the handle of a transfer stopped before its end is not kept: libcurl may still hold a piece of it")
        func stoppedNotKept() async throws {
            let server = try FaultServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"),
                .send("first"), .pause(.seconds(30)), .close,
            ])
            defer { server.stop() }
            let transport = try CurlTransport(options: .init(keepsCookies: false))
            let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))
            do {
                let answer = try await client.stream(Endpoint<Data>.get("feed", decoding: .data))
                var iterator = answer.body.makeAsyncIterator()
                #expect(try await iterator.next() == Data("first".utf8))
            }
            // The reader is gone: the transfer is stopped, and its handle given back once nothing
            // holds the transfer.
            let deadline = ContinuousClock.now + .seconds(10) * TestTiming.scale
            while transport.givenHandleCount == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }

            #expect(transport.givenHandleCount == 1)
            #expect(transport.keptHandleCount == 0)
        }

        @Test("no more handles are kept than the limit, however many transfers ended")
        func keptUpToTheLimit() async throws {
            let server = try echoServer()
            defer { server.stop() }
            let transport = try CurlTransport(options: .init(maximumConnectionsPerHost: 4, keepsCookies: false))
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: transport))
            let count = transport.keptHandleLimit * 3

            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<count {
                    group.addTask {
                        try await client.send(
                            Endpoint<String>.get("echo", headers: ["X-Trace": "\(index)"]).sharingIdenticalRequests(
                                false))
                    }
                }
                var answers = 0
                for try await answer in group where answer.hasPrefix("GET ") { answers += 1 }
                #expect(answers == count)
            }

            // More transfers ended than may be kept: exactly the limit is.
            #expect(
                try await keptHandles(transport, settlingAt: transport.keptHandleLimit) == transport.keptHandleLimit)
            #expect(transport.activeTransferCount == 0)
        }
    }
#endif
