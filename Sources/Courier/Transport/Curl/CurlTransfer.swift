#if os(Linux)
    import CCurl
    import Foundation

    /// One exchange on a libcurl easy handle: configured from an ``HTTPRequest`` and a
    /// ``PreparedBody``, fed by libcurl's callbacks on the event-loop thread, and answered
    /// exactly once: by completion, by cancellation or by the deadline, whichever comes first.
    ///
    /// `@unchecked Sendable`: `state`, the head and the sink are guarded by `lock`; the
    /// upload source is read only by libcurl's read callback on the loop thread.
    final class CurlTransfer: @unchecked Sendable {
        private enum State {
            case idle
            case stoppedBeforeStart(NetworkError)
            case running(CheckedContinuation<HTTPResponse, any Error>)
            /// The caller has the head; the body goes on into the channel.
            case streaming(ByteChannel)
            case finished
        }

        let easy: OpaquePointer
        /// Where the handle came from and goes back to.
        private let handles: EasyHandles
        /// Whether the handle is attached to the transport's cookie jar.
        private let usesCookieJar: Bool
        /// The transfer's place in libcurl, given to the next request in line when it ends (a
        /// streamed body gives it up at its head: it may be read for as long as its reader likes).
        private var place: TransferAdmission.Place?
        /// Whether libcurl completed the transfer without error and never kept a piece of it
        /// (a paused stream): only then is the handle clean enough to reuse. libcurl keeps a
        /// paused piece in the handle past a reset when the connection carries other streams.
        private var reusable = false
        private var paused = false
        private let lock = NSLock()
        private var state = State.idle
        /// The answer's head, as its header lines arrive.
        private var head = CurlResponseHead()
        private var failure: NetworkError?
        /// Whether the connection held bytes of an earlier answer when this request was to go.
        private var foundUnreadBytes = false
        private let freshConnection: Bool
        /// Kept-alive connections to check before sending; `nil` over TLS.
        private var keptConnections: KeptConnections?
        private let sink: ResponseBodySink
        /// Set when the caller reads a 2xx body as it arrives.
        let streaming: StreamRequest?
        /// What resumes the paused transfer and what stops it, for a streamed body (set by the
        /// transport before the transfer starts; both hold the transfer weakly).
        var streamControl: (resume: @Sendable () -> Void, stop: @Sendable (NetworkError) -> Void)?
        private let progress: ProgressReporter?
        private let uploadLength: Int64
        private let deadline: Duration
        /// What libcurl reads the request from, until the transfer ends.
        private var parts = CurlRequestParts()
        private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
        /// Sets the handle's options (with the failures tests inject).
        private let options: CurlOptions
        /// Whether the request's timeline wants the connection and byte counts too.
        private let measuresFacts: Bool

        /// Configures an easy handle for one exchange.
        /// - Parameters:
        ///   - request: The request (its body is sent only when `body` has content).
        ///   - body: The prepared body.
        ///   - timeout: The time left until the overall deadline.
        ///   - deadline: The whole deadline, for the error message.
        ///   - tls: Certificate authorities and pins.
        ///   - cookieJar: Where cookies are kept, or `nil` to send and keep none.
        ///   - handles: The transport's kept easy handles.
        ///   - place: The transfer's place in libcurl, held until the transfer ends.
        ///   - freshConnection: Whether to open a new connection even for an idempotent request.
        ///   - keptConnections: The transport's kept-alive connections.
        ///   - faults: Failures tests inject.
        /// - Throws: ``NetworkError/Code/invalidRequest`` for a URL libcurl cannot take,
        ///   ``NetworkError/Code/tls`` when libcurl cannot check the TLS options,
        ///   ``NetworkError/Code/transport`` when no handle can be made or an option is refused.
        init(
            request: HTTPRequest, body: PreparedBody, timeout: Duration, deadline: Duration, tls: TLSOptions,
            cookieJar: OpaquePointer?, handles: EasyHandles, place: TransferAdmission.Place,
            freshConnection: Bool = false, keptConnections: KeptConnections? = nil, faults: CurlFaults = CurlFaults()
        ) throws(NetworkError) {
            // libcurl would add the jar's cookies as a second `Cookie` header next to the caller's.
            let usesCookieJar = cookieJar != nil && request.headers["Cookie"] == nil
            guard let easy = handles.take(withJar: usesCookieJar) else {
                throw NetworkError(.transport, "libcurl could not make a handle.")
            }
            self.easy = easy
            self.handles = handles
            self.usesCookieJar = usesCookieJar
            self.place = place
            self.progress = request.progress
            // libcurl decodes only answers in memory (see `configure`).
            self.sink = ResponseBodySink(for: request, decodesContent: request.download == nil)
            self.streaming = request.streaming
            self.uploadLength = body.length
            self.deadline = deadline
            self.options = CurlOptions(easy: easy, faults: faults)
            self.freshConnection = freshConnection
            self.measuresFacts = request.measuresExchange
            errorBuffer.initialize(repeating: 0, count: 256)
            try configure(
                request, body: body, timeout: timeout, tls: tls, cookieJar: cookieJar, keptConnections: keptConnections)
        }

        deinit {
            handles.give(easy, withJar: usesCookieJar, reusable: reusable)
            parts.release()
            errorBuffer.deallocate()
        }

        // MARK: - Configuration

        private func configure(
            _ request: HTTPRequest, body: PreparedBody, timeout: Duration, tls: TLSOptions, cookieJar: OpaquePointer?,
            keptConnections: KeptConnections?
        ) throws(NetworkError) {
            // The URL as text, which libcurl parses itself; `url`, the part before the query, has its
            // scheme and host.
            let (text, url) = try request.wireURLText()
            try options.set(Int32(COURIER_CURLOPT_URL), text)
            try options.configureProtocols()
            try options.set(Int32(COURIER_CURLOPT_NOSIGNAL), 1)
            try options.set(Int32(COURIER_CURLOPT_TCP_NODELAY), 1)
            try options.set(Int32(COURIER_CURLOPT_HTTP_VERSION), Int(COURIER_CURL_HTTP_VERSION_2TLS))
            // A year at most: a caller's "no timeout" (`.seconds(Int64.max)`) must not overflow.
            let milliseconds = max(1, Int(min(timeout.seconds * 1000, 3.2e10).rounded(.up)))
            // A streamed answer has no overall deadline: the transport times its head instead.
            if request.streaming == nil {
                try options.set(Int32(COURIER_CURLOPT_TIMEOUT_MS), milliseconds)
            } else {
                try options.set(Int32(COURIER_CURLOPT_CONNECTTIMEOUT_MS), milliseconds)
            }
            try options.set(Int32(COURIER_CURLOPT_ERRORBUFFER), pointer: errorBuffer)
            try options.configureTLS(tls, for: url)
            // A proxy's answer to CONNECT is not the server's answer (it would begin the body).
            try options.set(Int32(COURIER_CURLOPT_SUPPRESS_CONNECT_HEADERS), 1)
            // libcurl silently resends a request whose kept-alive connection closed without an
            // answer; the server may have acted on it. A request that must not go twice gets a
            // connection of its own, which libcurl never retries.
            if !request.isIdempotent || freshConnection { try options.set(Int32(COURIER_CURLOPT_FRESH_CONNECT), 1) }
            // Answers in memory may come compressed (every encoding libcurl decodes, as URLSession
            // asks); a download is written byte for byte and resumed by byte offsets, so it is not.
            // A libcurl built without decoders refuses: then nothing compressed is asked for.
            if request.download == nil { _ = options.setText(Int32(COURIER_CURLOPT_ACCEPT_ENCODING), "") }
            if usesCookieJar, let cookieJar {
                let code = courier_curl_cookie_jar_use(easy, cookieJar)
                guard code == Int32(COURIER_CURLE_OK) else {
                    throw NetworkError(
                        .transport, "libcurl could not attach the cookie jar (\(CurlOptions.describe(code))).")
                }
            }
            try parts.setMethodAndBody(request.method, body, with: options)
            try parts.setHeaders(request.wireHeaders(contentType: body.contentType), with: options)
            try installCallbacks()
            switch url.scheme?.lowercased() {
            case "http": if let keptConnections { try installConnectionCheck(keptConnections) }
            case "https": try installConnectionReady()
            default: break
            }
        }

        /// Before a request goes out on a kept-alive connection, checks that the connection holds
        /// no bytes yet (see ``KeptConnections``). Such a connection is closed and the request is
        /// sent again on a new one (nothing of it was sent). Plain HTTP only: over TLS unread
        /// bytes are normal (session tickets, HTTP/2 frames) and libcurl reads them itself.
        /// A libcurl older than 7.80 has no such hook; there the check is skipped.
        private func installConnectionCheck(_ keptConnections: KeptConnections) throws(NetworkError) {
            self.keptConnections = keptConnections
            let function = Int32(COURIER_CURLOPT_PREREQFUNCTION)
            let callback = unsafeBitCast(curlConnectionCheck, to: CFunction.self)
            let code = options.code(function) { courier_curl_setopt_function($0, function, callback) }
            guard code != Int32(COURIER_CURLE_UNKNOWN_OPTION) else { return }
            try options.check(function, code)
            try options.set(Int32(COURIER_CURLOPT_PREREQDATA), pointer: Unmanaged.passUnretained(self).toOpaque())
        }

        /// Tells the transfer's place when its connection is ready (see ``TransferAdmission``).
        /// A libcurl older than 7.80 cannot tell; there the place is told at once.
        private func installConnectionReady() throws(NetworkError) {
            let function = Int32(COURIER_CURLOPT_PREREQFUNCTION)
            let callback = unsafeBitCast(curlConnectionReady, to: CFunction.self)
            let code = options.code(function) { courier_curl_setopt_function($0, function, callback) }
            guard code != Int32(COURIER_CURLE_UNKNOWN_OPTION) else { return connectionReady() }
            try options.check(function, code)
            try options.set(Int32(COURIER_CURLOPT_PREREQDATA), pointer: Unmanaged.passUnretained(self).toOpaque())
        }

        /// The connection is set up, or kept alive (libcurl's thread, before the request).
        fileprivate func connectionReady() {
            lock.withLock { place }?.connectionReady()
        }

        /// Whether the connection is fit to send on (libcurl's thread, before the request).
        fileprivate func connectionIsClean(local: Int, peer: Int) -> Bool {
            guard keptConnections?.isClean(local: local, peer: peer) == false else { return true }
            lock.withLock { foundUnreadBytes = true }
            return false
        }

        /// Whether the caller still waits (a transfer stopped before libcurl took it is never added).
        var isRunning: Bool {
            lock.withLock {
                if case .running = state { return true }
                return false
            }
        }

        /// Whether the transfer's connection is checked before reuse (plain HTTP).
        var checksConnection: Bool { keptConnections != nil }

        /// The error of a transfer stopped because its connection held unread bytes, before any
        /// of it was sent: the transport sends it again on a new connection.
        struct UnreadBytes: Error {}

        private func installCallbacks() throws(NetworkError) {
            let me = Unmanaged.passUnretained(self).toOpaque()
            func install(_ callback: CFunction, _ function: Int32, data: Int32) throws(NetworkError) {
                try options.check(
                    function, options.code(function) { courier_curl_setopt_function($0, function, callback) })
                try options.set(data, pointer: me)
            }
            try install(
                unsafeBitCast(curlHeaderCallback, to: CFunction.self), Int32(COURIER_CURLOPT_HEADERFUNCTION),
                data: Int32(COURIER_CURLOPT_HEADERDATA))
            try install(
                unsafeBitCast(curlWriteCallback, to: CFunction.self), Int32(COURIER_CURLOPT_WRITEFUNCTION),
                data: Int32(COURIER_CURLOPT_WRITEDATA))
            try install(
                unsafeBitCast(curlReadCallback, to: CFunction.self), Int32(COURIER_CURLOPT_READFUNCTION),
                data: Int32(COURIER_CURLOPT_READDATA))
            try install(
                unsafeBitCast(curlProgressCallback, to: CFunction.self), Int32(COURIER_CURLOPT_XFERINFOFUNCTION),
                data: Int32(COURIER_CURLOPT_XFERINFODATA))
            try options.set(Int32(COURIER_CURLOPT_NOPROGRESS), 0)
        }

        // MARK: - Life cycle

        /// Records the caller's continuation, or answers it at once when the transfer was
        /// stopped before it started.
        /// - Returns: Whether the transfer should be handed to libcurl.
        func begin(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
            lock.lock()
            if case .stoppedBeforeStart(let error) = state {
                state = .finished
                lock.unlock()
                continuation.resume(throwing: error)
                return false
            }
            state = .running(continuation)
            lock.unlock()
            return true
        }

        /// Takes the lock once, when the caller's `await` has returned. Every answer (the response
        /// or the error) is built under the lock, on whichever thread answers, so this orders
        /// the caller's reads of it after the writes where the thread sanitizer sees it: the
        /// Swift runtime hands a continuation's value over on a fast path that tells the
        /// sanitizer nothing when the caller had not yet begun to wait.
        func settle() {
            lock.lock()
            lock.unlock()
        }

        /// Answers the caller with `error` at once (cancellation); the loop removes the handle.
        /// - Returns: Whether the transfer was running (and so must be removed from libcurl).
        @discardableResult
        func stop(_ error: NetworkError, unlessStreaming: Bool = false) -> Bool {
            lock.lock()
            switch state {
            case .idle:
                state = .stoppedBeforeStart(error)
                lock.unlock()
                return false
            case .running(let continuation):
                state = .finished
                let answer = attachingHead(to: error)
                _ = try? sink.finish()
                lock.unlock()
                continuation.resume(throwing: answer)
                return true
            case .streaming(let channel):
                guard !unlessStreaming else {
                    lock.unlock()
                    return false
                }
                state = .finished
                lock.unlock()
                channel.finish(error)
                return true
            case .stoppedBeforeStart, .finished:
                lock.unlock()
                return false
            }
        }

        /// ``stop(_:)`` for a caller still waiting for the head (the head's deadline, the caller's
        /// cancellation): a body already streaming belongs to its reader. One step under the
        /// lock, so a head that arrives at the deadline is either answered or stopped, never
        /// both.
        func stopUnlessStreaming(_ error: NetworkError) -> Bool {
            stop(error, unlessStreaming: true)
        }

        /// Ends the transfer with libcurl's result (on the loop thread).
        func complete(result: Int32) {
            lock.lock()
            reusable = result == Int32(COURIER_CURLE_OK) && !paused
            if case .streaming(let channel) = state {
                state = .finished
                let failure =
                    failure
                    ?? (result == Int32(COURIER_CURLE_OK)
                        ? nil : CurlErrors.error(for: result, detail: detail, deadline: deadline))
                lock.unlock()
                return channel.finish(failure.map(attachingHead))
            }
            guard case .running(let continuation) = state else {
                lock.unlock()
                return
            }
            state = .finished
            let outcome: Result<HTTPResponse, any Error>
            if foundUnreadBytes {
                outcome = .failure(UnreadBytes())
            } else if let failure {
                _ = try? sink.finish()
                outcome = .failure(attachingHead(to: failure))
            } else if result != Int32(COURIER_CURLE_OK) {
                _ = try? sink.finish()
                outcome = .failure(attachingHead(to: CurlErrors.error(for: result, detail: detail, deadline: deadline)))
            } else {
                outcome = Result { () throws in
                    let (body, file) = try sink.finish()
                    var response = HTTPResponse(status: head.status, headers: head.headers, body: body, url: nil)
                    response.bodyFile = file
                    response.timings = timings()
                    response.httpVersion = head.version
                    if measuresFacts { response.exchangeFacts = facts() }
                    return response
                }
            }
            lock.unlock()
            continuation.resume(with: outcome)
        }

        private var detail: String { String(cString: errorBuffer) }

        private func attachingHead(to error: NetworkError) -> NetworkError {
            guard head.isComplete, error.status == nil else { return error }
            var error = error
            error.status = head.status
            error.headers = head.headers
            return error
        }

        private func timings() -> TransferTimings {
            func duration(_ info: Int32) -> Duration {
                var microseconds: Int64 = 0
                _ = courier_curl_getinfo_offset(easy, info, &microseconds)
                return .microseconds(microseconds)
            }
            return TransferTimings(
                nameLookup: duration(Int32(COURIER_CURLINFO_NAMELOOKUP_TIME_T)),
                connect: duration(Int32(COURIER_CURLINFO_CONNECT_TIME_T)),
                tlsHandshake: duration(Int32(COURIER_CURLINFO_APPCONNECT_TIME_T)),
                firstByte: duration(Int32(COURIER_CURLINFO_STARTTRANSFER_TIME_T)),
                total: duration(Int32(COURIER_CURLINFO_TOTAL_TIME_T)))
        }

        /// What libcurl counted beyond the timings, for a request's timeline.
        private func facts() -> ExchangeFacts {
            var counted = courier_curl_facts()
            courier_curl_read_facts(easy, &counted)
            func known<T: BinaryInteger>(_ value: T) -> Int? { value >= 0 ? Int(value) : nil }
            var facts = ExchangeFacts()
            facts.requestSent = counted.post_transfer_us >= 0 ? .microseconds(counted.post_transfer_us) : nil
            facts.isReused = counted.new_connections >= 0 ? counted.new_connections == 0 : nil
            if let address = counted.primary_ip, address.pointee != 0 {
                facts.remoteAddress = ExchangeFacts.address(String(cString: address), port: known(counted.primary_port))
            }
            facts.requestHeaderBytes = known(counted.request_header_bytes)
            facts.requestBodyBytes = known(counted.uploaded)
            facts.responseHeaderBytes = known(counted.response_header_bytes)
            facts.responseBodyBytes = known(counted.downloaded)
            return facts
        }

        // MARK: - Callbacks (loop thread)

        /// One header line; a blank line ends a head. Returns false to abort the transfer.
        /// Parsed as bytes: this runs for every header of every answer on the loop thread.
        fileprivate func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
            lock.lock()
            switch state {
            case .running, .streaming: break
            default:
                lock.unlock()
                return false
            }
            switch head.take(line) {
            case .tooLarge:
                failure = NetworkError(
                    .responseTooLarge, "The answer's header is larger than \(HTTPResponse.maximumHeaderSize) bytes.")
                lock.unlock()
                return false
            case .reading, .afterHead:
                lock.unlock()
                return true
            case .completed:
                // A streamed body has no size limit and no destination: its reader bounds it.
                if streaming != nil, StreamRequest.streams(status: head.status, headers: head.headers),
                    case .running(let continuation) = state
                {
                    return openStream(answering: continuation)
                }
                do throws(NetworkError) {
                    try sink.begin(status: head.status, headers: head.headers)
                } catch {
                    failure = error
                    lock.unlock()
                    return false
                }
                lock.unlock()
                return true
            }
        }

        /// Answers the caller with the head of a streamed answer; its body goes into a channel
        /// from now on. Called with `lock` held; releases it.
        private func openStream(answering continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
            let channel = streaming?.makeChannel() ?? ByteChannel()
            state = .streaming(channel)
            var response = HTTPResponse(status: head.status, headers: head.headers, url: nil)
            response.httpVersion = head.version
            response.streamedBody = ResponseBodyStream.Reading(channel)
            let control = streamControl
            let released = place
            place = nil
            lock.unlock()
            withExtendedLifetime(released) {}
            if let control { channel.connect(onDemand: control.resume, onCancel: control.stop) }
            continuation.resume(returning: response)
            return true
        }

        /// A piece of the body. Returns what libcurl takes: the count (taken), 0 (abort), or
        /// `CURL_WRITEFUNC_PAUSE` (a streamed body's reader is behind: libcurl keeps the piece
        /// and stops reading the socket until the reader catches up and the loop resumes it).
        fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            lock.lock()
            defer { lock.unlock() }
            if case .streaming(let channel) = state {
                switch channel.offer(Data(bytes)) {
                case .taken: return bytes.count
                case .full:
                    paused = true
                    return Int(COURIER_CURL_WRITEFUNC_PAUSE)
                case .closed: return 0
                }
            }
            guard case .running = state else { return 0 }
            // libcurl passes on bytes after a head Courier did not take as final (a `101`, a
            // status line it reads otherwise): no limit or destination holds for them yet.
            guard head.isComplete else {
                failure = NetworkError(.transport, "The server sent a body without a complete, final answer head.")
                return 0
            }
            do throws(NetworkError) {
                try sink.append(Data(bytes))
                return bytes.count
            } catch {
                failure = error
                return 0
            }
        }

        /// Fills libcurl's buffer from the upload file. Returns bytes read, 0 at the end, or
        /// `nil` to abort.
        fileprivate func readUpload(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
            let count = read(parts.uploadDescriptor, buffer.baseAddress, buffer.count)
            guard count >= 0 else {
                lock.withLock { failure = NetworkError(.fileSystem, "The upload file could not be read.") }
                return nil
            }
            return count
        }

        /// Progress; returns false to abort a transfer whose caller was answered already.
        fileprivate func advance(uploaded: Int64, of expected: Int64) -> Bool {
            if uploaded > 0 { progress?.uploaded(uploaded, of: expected > 0 ? expected : uploadLength) }
            return lock.withLock {
                if case .finished = state { return false }
                return true
            }
        }
    }

    private typealias CFunction = @convention(c) () -> Void

    private func transfer(_ user: UnsafeMutableRawPointer?) -> CurlTransfer {
        Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
    }

    private let curlHeaderCallback:
        @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            data, size, count, user in
            let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
            return transfer(user).receiveHeader(bytes) ? size * count : 0
        }

    private let curlWriteCallback:
        @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            data, size, count, user in
            let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
            return transfer(user).receiveBody(bytes)
        }

    private let curlReadCallback:
        @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            buffer, size, count, user in
            let target = UnsafeMutableRawBufferPointer(start: buffer, count: size * count)
            return transfer(user).readUpload(into: target) ?? Int(COURIER_CURL_READFUNC_ABORT)
        }

    private let curlConnectionCheck:
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32
        ) -> Int32 = { user, _, _, peer, local in
            transfer(user).connectionIsClean(local: Int(local), peer: Int(peer)) ? 0 : 1
        }

    private let curlConnectionReady:
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32
        ) -> Int32 = { user, _, _, _, _ in
            transfer(user).connectionReady()
            return 0
        }

    private let curlProgressCallback: @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32 = {
        user, _, _, uploadTotal, uploaded in
        transfer(user).advance(uploaded: uploaded, of: uploadTotal) ? 0 : 1
    }
#endif
