#if os(Linux)
    import CCurl
    import CourierTesting
    import Foundation
    import Testing

    /// What the Linux WebSocket connection will stand on, with the libcurl this machine has
    /// (Debian 12's 7.88, which has no WebSocket API of its own): libcurl opens the connection
    /// and nothing more (`CURLOPT_CONNECT_ONLY`), then carries bytes written and read by hand
    /// (`curl_easy_send`, `curl_easy_recv`), waiting on its socket when it has none. The
    /// connection is opened with `curl_easy_perform`: opened through a multi handle and then
    /// taken out of it, the handle had no socket left with 7.88 (tried on 2026-12-06).
    @Suite struct CurlConnectOnlyTests {
        /// Waits until the socket can be read (or written), for at most two seconds.
        private func wait(on socket: Int32, writing: Bool) -> Bool {
            var descriptor = pollfd(fd: socket, events: Int16(writing ? POLLOUT : POLLIN), revents: 0)
            return poll(&descriptor, 1, 2000 * Int32(TestTiming.scale)) == 1
        }

        @Test("a connection libcurl opened without a request carries an HTTP exchange written and read by hand")
        func connectOnly() throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/v1/ping") { _ in .envelope(data: "pong") }
            #expect(courier_curl_load() == 0)
            let easy = try #require(courier_curl_easy_init())
            defer { courier_curl_easy_cleanup(easy) }
            _ = courier_curl_setopt_pointer(easy, Int32(COURIER_CURLOPT_URL), server.baseURL.absoluteString)
            _ = courier_curl_setopt_long(easy, Int32(COURIER_CURLOPT_CONNECT_ONLY), 1)
            _ = courier_curl_setopt_long(easy, Int32(COURIER_CURLOPT_NOSIGNAL), 1)
            #expect(courier_curl_easy_perform(easy) == Int32(COURIER_CURLE_OK), "connected")
            let socket = courier_curl_last_socket(easy)
            try #require(socket >= 0)

            var request = Array("GET /v1/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
            while !request.isEmpty {
                var sent = 0
                let code = courier_curl_easy_send(easy, request, request.count, &sent)
                if code == Int32(COURIER_CURLE_AGAIN) {
                    try #require(wait(on: socket, writing: true))
                    continue
                }
                try #require(code == Int32(COURIER_CURLE_OK))
                request.removeFirst(sent)
            }

            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var received = 0
                let code = courier_curl_easy_recv(easy, &buffer, buffer.count, &received)
                if code == Int32(COURIER_CURLE_AGAIN) {
                    try #require(wait(on: socket, writing: false), "the answer came")
                    continue
                }
                try #require(code == Int32(COURIER_CURLE_OK))
                if received == 0 { break }  // the server closed the connection
                answer += buffer[..<received]
            }
            let text = String(decoding: answer, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.contains("\"data\":\"pong\""))
        }
    }
#endif
