import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// One request's life: not started → starting → running → finished, whichever of
    /// completion, cancellation and the deadline comes first. The caller is answered exactly
    /// once, at once; `URLSession` is told to stop only while its task is still running.
    ///
    /// FoundationNetworking makes a task by waiting for its process-wide work queue, which
    /// another answer (10,000 header lines, say) can hold for a second: the deadline is armed
    /// before, so that wait counts against it.
    ///
    /// `@unchecked Sendable`: all mutable state is guarded by `lock`.
    final class Call: @unchecked Sendable {
        private enum State {
            case idle
            case stoppedBeforeStart(NetworkError)
            case starting(CheckedContinuation<HTTPResponse, any Error>)
            case running(CheckedContinuation<HTTPResponse, any Error>, URLSessionDataTask)
            /// The caller has the head; the body goes on into the channel.
            case streaming(ByteChannel, URLSessionDataTask)
            case finished
        }

        private let lock = NSLock()
        private var state = State.idle
        /// Whether the task was resumed; until then a stop leaves the cancel to the start
        /// (cancelling a task that never ran can trap FoundationNetworking).
        private var resumed = false
        /// Whether the call was stopped between making its task and resuming it.
        private var cancelsOnResume = false
        private var deadlineToken: Deadlines.Token?
        private weak var registry: SessionDelegate?
        private var head: Head?
        /// Phase timings, the HTTP version and the rest the task's metrics tell (Apple
        /// platforms).
        private var metrics: (timings: TransferTimings?, httpVersion: String?, facts: ExchangeFacts?)
        /// When the call began, and when the answer's head arrived since, for a request's
        /// timeline (`nil` when nobody records one).
        private let began: ContinuousClock.Instant?
        private var headArrived: Duration?
        private let sink: ResponseBodySink
        /// Set when the caller reads a 2xx body as it arrives.
        private let streaming: StreamRequest?
        /// Apple platforms: whether the task is suspended because its reader is behind.
        private var suspended = false
        private let request: URLRequest
        private let body: PreparedBody
        private let progress: ProgressReporter?
        private let deadline: ContinuousClock.Instant
        private let timedOut: NetworkError

        /// - Parameters:
        ///   - request: What to send, without its body.
        ///   - body: The body: bytes, or a file to stream.
        ///   - original: The request it was made from: where the answer's body goes, its
        ///     limits, where progress is reported.
        ///   - deadline: When the request must have its answer.
        ///   - timedOut: The error thrown when it passes.
        init(
            request: URLRequest, body: PreparedBody, original: HTTPRequest, deadline: ContinuousClock.Instant,
            timedOut: NetworkError
        ) {
            self.request = request
            self.body = body
            self.progress = original.progress
            // FoundationNetworking decodes every Content-Encoding it meets.
            self.sink = ResponseBodySink(for: original, decodesContent: true)
            self.streaming = original.streaming
            self.deadline = deadline
            self.timedOut = timedOut
            self.began = original.measuresExchange ? .now : nil
        }

        /// Arms the deadline, then makes, registers and resumes the task, unless the call was
        /// stopped already.
        func start(
            _ continuation: CheckedContinuation<HTTPResponse, any Error>, in session: URLSession,
            registry: SessionDelegate
        ) {
            let stopped: NetworkError? = lock.withLock {
                if case .stoppedBeforeStart(let error) = state {
                    state = .finished
                    return error
                }
                state = .starting(continuation)
                self.registry = registry
                deadlineToken = Deadlines.shared.arm(at: deadline) { [weak self, timedOut] in
                    self?.stop(timedOut, unlessStreaming: true)
                }
                return nil
            }
            if let stopped { return answer(continuation, with: .failure(stopped)) }
            #if canImport(FoundationNetworking)
                // Making and resuming a task wait for FoundationNetworking's process-wide work
                // queue, which a flooding answer can hold for seconds: on Swift's few threads
                // that wait would hold back every task of the process, the callers of calls
                // already answered (at their deadline, say) among them.
                URLSessionTransport.sessionCalls.async { [self] in makeAndResumeTask(in: session, registry: registry) }
            #else
                makeAndResumeTask(in: session, registry: registry)
            #endif
        }

        /// Makes, registers and resumes the task, unless the call was stopped meanwhile.
        private func makeAndResumeTask(in session: URLSession, registry: SessionDelegate) {
            let stillWanted: Bool = lock.withLock {
                if case .starting = state { return true }
                return false
            }
            guard stillWanted else { return }
            let task = makeTask(in: session)
            let started: Bool = lock.withLock {
                guard case .starting(let continuation) = state else { return false }
                state = .running(continuation, task)
                registry.register(self, for: task)
                return true
            }
            task.resume()
            // Stopped while the task was being made or resumed: the caller has its answer.
            let cancels: Bool = lock.withLock {
                resumed = true
                return !started || cancelsOnResume
            }
            if cancels { URLSessionTransport.cancelCalls.async { task.cancel() } }
        }

        private func makeTask(in session: URLSession) -> URLSessionDataTask {
            switch body.content {
            case .none: return session.dataTask(with: request)
            case .data(let data):
                var withBody = request
                withBody.httpBody = data
                return session.dataTask(with: withBody)
            case .file(let url, _): return session.uploadTask(with: request, fromFile: url)
            }
        }

        /// Ends the call with an error (cancellation, deadline, a failed write, a body over its
        /// limit) and stops the transfer. Safe in a delegate method: the task is cancelled on
        /// ``URLSessionTransport/cancelCalls``, since `cancel()` waits for FoundationNetworking's
        /// work thread, which on Linux is the thread delegate methods run on.
        func stop(_ error: NetworkError, unlessStreaming: Bool = false) {
            lock.lock()
            switch state {
            case .streaming(let channel, let task):
                guard !unlessStreaming else { return lock.unlock() }
                state = .finished
                lock.unlock()
                channel.finish(error)
                registry?.forget(task)
                URLSessionTransport.cancelCalls.async { task.cancel() }
            case .idle:
                state = .stoppedBeforeStart(error)
                lock.unlock()
            case .starting(let continuation):
                state = .finished
                let deadlineToken = self.deadlineToken
                lock.unlock()
                deadlineToken.map(Deadlines.shared.disarm)
                answer(continuation, with: .failure(error))
            case .running(let continuation, let task):
                state = .finished
                let error = Self.attaching(head, to: error)
                let cancelsNow = resumed
                cancelsOnResume = !resumed
                let deadlineToken = self.deadlineToken
                lock.unlock()
                deadlineToken.map(Deadlines.shared.disarm)
                // The caller is answered first: `cancel()` waits for FoundationNetworking's
                // process-wide work queue, which a flooding answer can keep busy for seconds.
                // A broken download keeps every byte that arrived, written before the answer.
                finishingSink { [self] in
                    _ = try? sink.finish()
                    answer(continuation, with: .failure(error))
                }
                registry?.forget(task)
                if cancelsNow { URLSessionTransport.cancelCalls.async { task.cancel() } }
            case .stoppedBeforeStart, .finished:
                lock.unlock()
            }
        }

        /// Records the response head and opens the body's destination.
        func received(_ response: URLResponse) {
            lock.lock()
            guard case .running(let continuation, let task) = state, let http = response as? HTTPURLResponse else {
                return lock.unlock()
            }
            let head = Head(http)
            self.head = head
            if let began { headArrived = .now - began }
            // A streamed body has no size limit and no destination: its reader bounds it.
            guard let streaming, StreamRequest.streams(status: head.status, headers: head.headers) else {
                do throws(NetworkError) {
                    try sink.begin(status: head.status, headers: head.headers)
                } catch {
                    lock.unlock()
                    return stop(error)
                }
                return lock.unlock()
            }
            // A streamed answer: the caller gets the head now, the body through the channel.
            let channel = streaming.makeChannel()
            state = .streaming(channel, task)
            let deadlineToken = self.deadlineToken
            lock.unlock()
            deadlineToken.map(Deadlines.shared.disarm)
            channel.connect(
                onDemand: { [weak self, weak task] in
                    // Apple platforms: the task suspended when the channel filled goes on.
                    #if !canImport(FoundationNetworking)
                        guard let self, let task else { return }
                        lock.withLock {
                            guard suspended else { return }
                            suspended = false
                            task.resume()
                        }
                    #else
                        _ = (self, task)
                    #endif
                },
                onCancel: { [weak self] error in self?.stop(error) })
            var response = Self.httpResponse(head, body: Data(), file: nil)
            response.streamedBody = ResponseBodyStream.Reading(channel)
            answer(continuation, with: .success(response))
        }

        /// Stores a piece of the body.
        func received(_ data: Data) {
            if let (channel, task) = streamingState() {
                return receivedStreamed(data, into: channel, of: task)
            }
            let failure: NetworkError? = lock.withLock {
                guard case .running = state else { return nil }
                do throws(NetworkError) {
                    try sink.append(data)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { stop(failure) }
        }

        private func streamingState() -> (ByteChannel, URLSessionDataTask)? {
            lock.withLock {
                if case .streaming(let channel, let task) = state { return (channel, task) }
                return nil
            }
        }

        /// A piece of a streamed body. When the reader is behind: on Apple platforms the task is
        /// suspended until it catches up. On Linux a task cannot be paused (FoundationNetworking
        /// would start it over) and its delegate runs on the work thread every task of the
        /// process shares, which must not wait: the channel takes up to
        /// ``StreamRequest/lingeringLimit`` bytes more, and a reader further behind fails the
        /// stream with ``NetworkError/Code/responseTooLarge`` (``CurlTransport``, the default
        /// there, pauses the one transfer instead).
        private func receivedStreamed(_ data: Data, into channel: ByteChannel, of task: URLSessionDataTask) {
            guard !channel.push(data), !channel.isEnded else { return }
            #if canImport(FoundationNetworking)
                let limit = streaming?.lingeringLimit ?? 0
                guard channel.bufferedByteCount > limit else { return }
                stop(
                    NetworkError(
                        .responseTooLarge,
                        "The stream's reader fell more than \(limit) bytes behind; URLSession cannot pause a transfer on Linux (CurlTransport can)."
                    ))
            #else
                // Under the lock, against the reader's demand: it may have caught up meanwhile
                // (and found nothing to resume), so the buffer is looked at again.
                lock.withLock {
                    guard !suspended, channel.isOverHighWater else { return }
                    suspended = true
                    task.suspend()
                }
            #endif
        }

        /// Records what the task's metrics tell, for the answer (Apple platforms, where
        /// `URLSession` reports them just before the task completes).
        func collected(timings: TransferTimings?, httpVersion: String?, facts: ExchangeFacts) {
            lock.withLock { metrics = (timings, httpVersion, facts) }
        }

        /// Reports request body bytes sent.
        func sent(_ total: Int64, of expected: Int64) {
            progress?.uploaded(total, of: expected > 0 ? expected : body.length)
        }

        /// Ends the call with what `URLSession` delivered: the response, or `error`.
        /// - Parameters:
        ///   - override: A response to use instead of the one received (a 401 that
        ///     `URLSession` reports only through an authentication challenge).
        ///   - fallback: The task's response, used when none was received.
        func complete(error: (any Error)?, override: HTTPURLResponse? = nil, fallback: HTTPURLResponse? = nil) {
            lock.lock()
            if case .streaming(let channel, _) = state {
                state = .finished
                let head = self.head
                lock.unlock()
                return channel.finish(error.map { Self.attaching(head, to: Self.networkError(for: $0)) })
            }
            guard case .running(let continuation, _) = state else {
                lock.unlock()
                return
            }
            state = .finished
            let head = override.map(Head.init) ?? self.head ?? fallback.map(Head.init)
            let metrics = self.metrics
            let deadlineToken = self.deadlineToken
            // Measured here where the task's metrics say nothing (Linux): when the head and the
            // whole answer reached the call.
            var measured = metrics.facts
            if let began {
                measured = measured ?? ExchangeFacts()
                measured?.headReceived = headArrived
                measured?.bodyReceived = .now - began
            }
            let facts = measured
            lock.unlock()
            deadlineToken.map(Deadlines.shared.disarm)
            finishingSink { [self] in
                let collected = Result { () throws(NetworkError) in try sink.finish() }
                if let error {
                    answer(continuation, with: .failure(Self.attaching(head, to: Self.networkError(for: error))))
                } else if let head {
                    answer(
                        continuation,
                        with: collected.map { collected in
                            var response = Self.httpResponse(head, body: collected.body, file: collected.file)
                            response.timings = metrics.timings
                            response.httpVersion = metrics.httpVersion
                            response.exchangeFacts = facts
                            return response
                        }.mapError { $0 })
                } else {
                    answer(
                        continuation, with: .failure(NetworkError(.transport, "The answer is not an HTTP response.")))
                }
            }
        }

        /// Answers the caller with `outcome`, built on this thread, after taking the lock once;
        /// the caller takes it again when its `await` returns (``settle()``). That orders the
        /// caller's reads of the answer after the writes where the thread sanitizer sees it: the
        /// Swift runtime hands a continuation's value over on a fast path that tells the
        /// sanitizer nothing when the caller had not yet begun to wait. Called without the lock.
        private func answer(
            _ continuation: CheckedContinuation<HTTPResponse, any Error>, with outcome: Result<HTTPResponse, any Error>
        ) {
            lock.withLock {}
            continuation.resume(with: outcome)
        }

        /// Takes the lock once, when the caller's `await` has returned: see
        /// ``answer(_:with:)``.
        func settle() { lock.withLock {} }

        /// Runs `body`, which finishes the sink, once the call has finished (nothing else
        /// touches the sink then). A body in memory is finished at once; a download's last write
        /// and `fsync` on one of Dispatch's shared threads, never on FoundationNetworking's work
        /// thread (where Linux delegate methods run), which every session of the process shares.
        private func finishingSink(_ body: @escaping @Sendable () -> Void) {
            if sink.writesFile {
                DispatchQueue.global().async(execute: body)
            } else {
                body()
            }
        }

        /// An error with the status and headers of an answer that had begun, so a broken
        /// download can be resumed with its validator.
        private static func attaching(_ head: Head?, to error: NetworkError) -> NetworkError {
            guard let head, error.status == nil else { return error }
            var error = error
            error.status = head.status
            error.headers = head.headers
            return error
        }

        /// An answer's status line and header, read out of `HTTPURLResponse` once.
        private struct Head {
            let status: Int
            let headers: HTTPHeaders
            let url: URL?

            init(_ response: HTTPURLResponse) {
                status = response.statusCode
                url = response.url
                headers = HTTPHeaders(response)
            }
        }

        private static func httpResponse(_ head: Head, body: Data, file: URL?) -> HTTPResponse {
            var response = HTTPResponse(status: head.status, headers: head.headers, body: body, url: head.url)
            response.bodyFile = file
            return response
        }

        /// Maps a `URLError` to the closest ``NetworkError`` code.
        static func networkError(for error: any Error) -> NetworkError {
            guard let urlError = error as? URLError else {
                return NetworkError(.transport, "The transfer failed.", underlying: error)
            }
            switch urlError.code {
            case .cancelled:
                return NetworkError(.cancelled, "The transfer was cancelled.", underlying: urlError)
            case .timedOut:
                return NetworkError(.timedOut, "The server stopped sending (idle timeout).", underlying: urlError)
            case .notConnectedToInternet:
                return NetworkError(.offline, "The device is not connected.", underlying: urlError)
            case .dataNotAllowed, .internationalRoamingOff:
                return NetworkError(
                    .offline, "The device may not use cellular data (settings or roaming).", underlying: urlError)
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
                .clientCertificateRequired:
                return NetworkError(
                    .tls, "The TLS handshake failed (URLError \(urlError.code.rawValue)).", underlying: urlError)
            case .appTransportSecurityRequiresSecureConnection:
                return NetworkError(
                    .invalidRequest, "App Transport Security allows only https to this host.", underlying: urlError)
            case .cannotConnectToHost:
                return NetworkError(.transport, "The server refused the connection.", underlying: urlError)
            case .networkConnectionLost:
                return NetworkError(.transport, "The connection was lost.", underlying: urlError)
            case .cannotFindHost, .dnsLookupFailed:
                return NetworkError(.transport, "The host name could not be resolved.", underlying: urlError)
            case .badURL:
                return NetworkError(.invalidRequest, "The URL is not supported.", underlying: urlError)
            // Only http and https URLs are sent, so this is libcurl's "unsupported protocol":
            // an answer that is not HTTP (no status line, an unknown version).
            case .unsupportedURL:
                return NetworkError(.transport, "The server's answer is not valid HTTP.", underlying: urlError)
            default:
                // FoundationNetworking reports most libcurl failures as -1; curl's own words
                // ("transfer closed with 3000000 bytes remaining to read") are in the cause.
                let cause = (urlError.userInfo[NSUnderlyingErrorKey] as? NSError)?.localizedDescription
                let detail = cause.map { ": \($0)" } ?? ""
                // libcurl's own cap on a header block (300 KB in Debian's and newer builds).
                // libcurl refuses a header line over 100 KB as "out of memory".
                if cause?.hasPrefix("Too large response header") == true || cause == "Out of memory" {
                    return NetworkError(
                        .responseTooLarge, "The answer's header is too large\(detail).", underlying: urlError)
                }
                if cause == "Failed writing header" {
                    return NetworkError(
                        .transport,
                        "FoundationNetworking cannot read the answer's header (bytes that are not UTF-8?); CurlTransport can.",
                        underlying: urlError)
                }
                return NetworkError(
                    .transport, "The transfer failed (URLError \(urlError.code.rawValue))\(detail).",
                    underlying: urlError)
            }
        }
    }
}
