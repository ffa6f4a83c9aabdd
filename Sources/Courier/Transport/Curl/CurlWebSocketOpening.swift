#if os(Linux)
    import CCurl
    import Foundation

    /// Opens a WebSocket on Linux with the libcurl every distribution ships: libcurl opens the
    /// connection and nothing more (`CURLOPT_CONNECT_ONLY`, with TLS, pins and a proxy's tunnel),
    /// then Courier writes the handshake and reads its answer itself (`curl_easy_send`,
    /// `curl_easy_recv`). Blocking, on a Dispatch thread of its own: the caller is answered at
    /// once when its task is cancelled, and the thread drops the connection when it is done.
    enum CurlWebSocketOpening {
        /// A connection whose handshake was answered.
        struct Opened: @unchecked Sendable {
            /// The answer; `101` when the server switched protocols.
            let response: HTTPResponse
            /// The connection, when it switched: its handle, its socket and the first bytes of
            /// the WebSocket read with the answer. `@unchecked Sendable`: handed from the opening
            /// thread to the connection's, never used by both.
            let connection: (easy: OpaquePointer, socket: Int32, leftover: [UInt8])?
        }

        /// Who answers the caller: the opening thread or the cancellation, whichever is first.
        ///
        /// `@unchecked Sendable`: all state is guarded by `lock`.
        private final class Answer: @unchecked Sendable {
            private let lock = NSLock()
            private var continuation: CheckedContinuation<Result<Opened, NetworkError>, Never>?
            private var cancelled = false

            var isCancelled: Bool { lock.withLock { cancelled } }

            func wait(_ continuation: CheckedContinuation<Result<Opened, NetworkError>, Never>) {
                let cancelledAlready = lock.withLock {
                    self.continuation = continuation
                    return cancelled
                }
                if cancelledAlready { cancel() }
            }

            /// Answers the caller; `false` when it was answered already (cancelled).
            func answer(_ result: Result<Opened, NetworkError>) -> Bool {
                guard
                    let continuation = lock.withLock({
                        () -> CheckedContinuation<Result<Opened, NetworkError>, Never>? in
                        defer { self.continuation = nil }
                        return cancelled ? nil : self.continuation
                    })
                else { return false }
                continuation.resume(returning: result)
                return true
            }

            func cancel() {
                let continuation = lock.withLock { () -> CheckedContinuation<Result<Opened, NetworkError>, Never>? in
                    cancelled = true
                    defer { self.continuation = nil }
                    return self.continuation
                }
                continuation?.resume(
                    returning: .failure(NetworkError(.cancelled, "The WebSocket's opening was cancelled.")))
            }

            /// See ``Blocking/Flag/settle()``.
            func settle() { lock.withLock {} }
        }

        /// Whether the opening whose ``Answer`` `answer` points to was cancelled.
        fileprivate static func isCancelled(_ answer: UnsafeMutableRawPointer) -> Bool {
            Unmanaged<Answer>.fromOpaque(answer).takeUnretainedValue().isCancelled
        }

        /// Connects and runs the handshake.
        /// - Parameters:
        ///   - request: The handshake's request, through every layer, with the upgrade headers.
        ///   - tls: Certificate authorities and pins.
        ///   - maximumBodySize: The most bytes of body taken from an answer that is not `101`.
        ///   - faults: Failures tests inject.
        ///   - ended: Called as the opening's thread ends (for tests: a cancelled opening must
        ///     not keep it).
        /// - Returns: The answer, and the connection when the server switched protocols.
        /// - Throws: ``NetworkError``: ``NetworkError/Code/cancelled``,
        ///   ``NetworkError/Code/timedOut`` past the request's timeout, ``NetworkError/Code/tls``,
        ///   ``NetworkError/Code/transport``.
        static func open(
            _ request: HTTPRequest, tls: TLSOptions, maximumBodySize: Int, faults: CurlFaults = CurlFaults(),
            ended: (@Sendable () -> Void)? = nil
        )
            async throws(NetworkError) -> Opened
        {
            guard !Task.isCancelled else { throw NetworkError(.cancelled, "The WebSocket's opening was cancelled.") }
            guard courier_curl_load() == 0 else {
                throw NetworkError(
                    .transport, "libcurl could not be loaded: \(String(cString: courier_curl_load_error())).")
            }
            let answer = Answer()
            let result = await withTaskCancellationHandler {
                defer { answer.settle() }
                return await withCheckedContinuation { continuation in
                    answer.wait(continuation)
                    // A thread of its own: the opening blocks for as long as the connection takes,
                    // which must not hold a worker of Dispatch's small pool.
                    Thread {
                        let result = Result { () throws(NetworkError) in
                            try connect(
                                request, tls: tls, maximumBodySize: maximumBodySize, faults: faults, answer: answer)
                        }
                        if !answer.answer(result), case .success(let opened) = result,
                            let connection = opened.connection
                        {
                            courier_curl_easy_cleanup(connection.easy)
                        }
                        ended?()
                    }.start()
                }
            } onCancel: {
                answer.cancel()
            }
            return try result.get()
        }

        /// Connects, runs the handshake and checks a `101` answer.
        /// - Returns: The answer, and for a `101` the connection, served from now on, with the
        ///   subprotocol the server chose.
        /// - Throws: As ``open(_:tls:maximumBodySize:faults:ended:)``, and
        ///   ``NetworkError/Code/transport`` for a `101` that does not complete the handshake.
        static func link(
            _ request: HTTPRequest, handshake: WebSocketHandshake, options: WebSocketOptions, tls: TLSOptions,
            maximumBodySize: Int
        ) async throws(NetworkError) -> (HTTPResponse, (link: any WebSocketLink, subprotocol: String?)?) {
            let opened = try await open(request, tls: tls, maximumBodySize: maximumBodySize)
            guard let connection = opened.connection else { return (opened.response, nil) }
            let subprotocol: String?
            do {
                subprotocol = try handshake.check(status: opened.response.status, headers: opened.response.headers)
            } catch {
                courier_curl_easy_cleanup(connection.easy)
                throw error
            }
            let link = CurlWebSocketLink(
                easy: connection.easy, socket: connection.socket, leftover: connection.leftover, options: options)
            link.start()
            return (opened.response, (link, subprotocol))
        }

        /// The blocking part, on the opening thread.
        private static func connect(
            _ request: HTTPRequest, tls: TLSOptions, maximumBodySize: Int, faults: CurlFaults, answer: Answer
        ) throws(NetworkError) -> Opened {
            let deadline = ContinuousClock.now + request.timeout
            guard let easy = courier_curl_easy_init() else {
                throw NetworkError(.transport, "libcurl could not make a handle.")
            }
            var handed = false
            defer { if !handed { courier_curl_easy_cleanup(easy) } }
            let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
            errorBuffer.initialize(repeating: 0, count: 256)
            // libcurl keeps the buffer's address for as long as the handle lives, which may be
            // longer than this function: it is taken back before the buffer goes.
            defer {
                _ = courier_curl_setopt_pointer(easy, Int32(COURIER_CURLOPT_ERRORBUFFER), nil)
                errorBuffer.deallocate()
            }

            let (text, url) = try request.wireURLText()
            let options = CurlOptions(easy: easy, faults: faults)
            try options.set(Int32(COURIER_CURLOPT_URL), text)
            try options.configureProtocols()
            try options.set(Int32(COURIER_CURLOPT_NOSIGNAL), 1)
            try options.set(Int32(COURIER_CURLOPT_TCP_NODELAY), 1)
            // The upgrade is HTTP/1.1's: TLS must not agree on HTTP/2.
            try options.set(Int32(COURIER_CURLOPT_HTTP_VERSION), Int(COURIER_CURL_HTTP_VERSION_1_1))
            try options.set(Int32(COURIER_CURLOPT_CONNECTTIMEOUT_MS), milliseconds(until: deadline))
            try options.set(Int32(COURIER_CURLOPT_ERRORBUFFER), pointer: errorBuffer)
            try options.configureTLS(tls, for: url)
            // Through a proxy the connection is a tunnel to the server, as for https.
            try options.set(Int32(COURIER_CURLOPT_HTTPPROXYTUNNEL), 1)
            try options.set(Int32(COURIER_CURLOPT_CONNECT_ONLY), 1)
            // A cancellation ends the connecting too, not only the handshake after it: libcurl
            // asks the progress function at least once a second while it connects.
            try options.check(
                Int32(COURIER_CURLOPT_XFERINFOFUNCTION),
                options.code(Int32(COURIER_CURLOPT_XFERINFOFUNCTION)) {
                    courier_curl_setopt_function(
                        $0, Int32(COURIER_CURLOPT_XFERINFOFUNCTION),
                        unsafeBitCast(openingProgress, to: (@convention(c) () -> Void).self))
                })
            try options.set(Int32(COURIER_CURLOPT_XFERINFODATA), pointer: Unmanaged.passUnretained(answer).toOpaque())
            try options.set(Int32(COURIER_CURLOPT_NOPROGRESS), 0)

            let cancelled = NetworkError(.cancelled, "The WebSocket's opening was cancelled.")
            if answer.isCancelled { throw cancelled }
            let code = courier_curl_easy_perform(easy)
            // The handle outlives `answer` in the connection: libcurl is told to forget it.
            _ = courier_curl_setopt_long(easy, Int32(COURIER_CURLOPT_NOPROGRESS), 1)
            _ = courier_curl_setopt_pointer(easy, Int32(COURIER_CURLOPT_XFERINFODATA), nil)
            if answer.isCancelled { throw cancelled }
            guard code == Int32(COURIER_CURLE_OK) else {
                throw CurlErrors.error(for: code, detail: String(cString: errorBuffer), deadline: request.timeout)
            }
            let socket = courier_curl_last_socket(easy)
            guard socket >= 0 else { throw NetworkError(.transport, "libcurl opened no connection for the WebSocket.") }
            let connection = Connection(
                easy: easy, socket: socket, deadline: deadline, timeout: request.timeout, answer: answer)
            // The head carries the token: not after a cancellation (a logout's, say).
            let head = Array(try head(of: request, url: url).utf8)
            if answer.isCancelled { throw cancelled }
            try connection.write(head)
            var reader = HandshakeAnswerReader(maximumBodySize: maximumBodySize, url: request.url)
            while true {
                guard let bytes = try connection.read() else {
                    return Opened(response: try reader.finish(), connection: nil)
                }
                switch try reader.append(bytes) {
                case .needsMore: continue
                case .answered(let response): return Opened(response: response, connection: nil)
                case .upgraded(let response, let leftover):
                    handed = true
                    return Opened(response: response, connection: (easy, socket, leftover))
                }
            }
        }

        /// The handshake's request head: `GET`, the path and query, `Host`, then the request's
        /// header fields (the upgrade's among them).
        static func head(of request: HTTPRequest, url: URL) throws(NetworkError) -> String {
            guard request.method == .get, request.body == .none else {
                throw NetworkError(.invalidRequest, "A WebSocket is opened with a GET without a body.")
            }
            let path = Array(url.absoluteString.utf8).withUnsafeBufferPointer { HTTPRequest.wirePath(inText: $0) }
            let target = request.query.isEmpty ? path : path + "?" + request.query.encoded
            var lines = ["GET \(target) HTTP/1.1"]
            if request.headers["Host"] == nil { lines.append("Host: \(authority(of: url))") }
            for field in request.headers { lines.append("\(field.name): \(field.value)") }
            // What every transfer of the transport sends unless the request has its own.
            for (name, value) in CurlRequestParts.defaultFields where request.headers[name] == nil {
                lines.append("\(name): \(value)")
            }
            return lines.joined(separator: "\r\n") + "\r\n\r\n"
        }

        /// `host[:port]` as a `Host` field carries it (an IPv6 address in brackets).
        static func authority(of url: URL) -> String {
            let host = url.host(percentEncoded: true) ?? ""
            let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return url.port.map { "\(shown):\($0)" } ?? shown
        }

        private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int {
            let left = deadline - .now
            return max(1, Int(min(left.seconds * 1000, 3.2e10).rounded(.up)))
        }

        /// Writes and reads on the opened connection until the deadline, checking for a
        /// cancellation every 50 ms.
        private struct Connection {
            let easy: OpaquePointer
            let socket: Int32
            let deadline: ContinuousClock.Instant
            let timeout: Duration
            let answer: Answer

            /// Waits until the socket is ready.
            private func wait(writing: Bool) throws(NetworkError) {
                while true {
                    if answer.isCancelled { throw NetworkError(.cancelled, "The WebSocket's opening was cancelled.") }
                    let left = deadline - .now
                    guard left > .zero else {
                        throw NetworkError(.timedOut, "The WebSocket's handshake was not answered within \(timeout).")
                    }
                    var descriptor = pollfd(fd: socket, events: Int16(writing ? POLLOUT : POLLIN), revents: 0)
                    let slice = Int32(max(1, min(50, left.seconds * 1000)))
                    if poll(&descriptor, 1, slice) > 0 { return }
                }
            }

            func write(_ bytes: [UInt8]) throws(NetworkError) {
                var offset = 0
                while offset < bytes.count {
                    var sent = 0
                    let code = bytes[offset...].withUnsafeBytes {
                        courier_curl_easy_send(easy, $0.baseAddress, $0.count, &sent)
                    }
                    if code == Int32(COURIER_CURLE_AGAIN) {
                        try wait(writing: true)
                        continue
                    }
                    guard code == Int32(COURIER_CURLE_OK) else {
                        throw CurlErrors.error(for: code, detail: "", deadline: timeout)
                    }
                    offset += sent
                }
            }

            /// The next bytes, or `nil` when the server closed the connection.
            func read() throws(NetworkError) -> [UInt8]? {
                var buffer = [UInt8](repeating: 0, count: 16 * 1024)
                while true {
                    var received = 0
                    let code = buffer.withUnsafeMutableBytes {
                        courier_curl_easy_recv(easy, $0.baseAddress, $0.count, &received)
                    }
                    if code == Int32(COURIER_CURLE_AGAIN) {
                        try wait(writing: false)
                        continue
                    }
                    guard code == Int32(COURIER_CURLE_OK) else {
                        throw CurlErrors.error(for: code, detail: "", deadline: timeout)
                    }
                    return received == 0 ? nil : Array(buffer[..<received])
                }
            }
        }
    }

    /// The opening's progress function: non-zero (stop) once the opening was cancelled.
    private let openingProgress: @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32 = {
        answer, _, _, _, _ in
        guard let answer else { return 0 }
        return CurlWebSocketOpening.isCancelled(answer) ? 1 : 0
    }
#endif
