import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// One request's life: not started → running → finished, whichever of completion,
    /// cancellation and the deadline comes first. The caller is answered exactly once, at once;
    /// `URLSession` is told to stop only while its task is still running.
    ///
    /// `@unchecked Sendable`: all mutable state is guarded by `lock`.
    final class Call: @unchecked Sendable {
        private enum State {
            case idle
            case stoppedBeforeStart(NetworkError)
            case running(CheckedContinuation<HTTPResponse, any Error>, URLSessionDataTask, any DispatchSourceTimer)
            case finished
        }

        private let lock = NSLock()
        private var state = State.idle
        private weak var registry: SessionDelegate?
        private var head: HTTPURLResponse?
        private let sink: ResponseBodySink
        private let request: URLRequest
        private let body: PreparedBody
        private let progress: ProgressReporter?
        private let timeout: Duration
        private let timedOut: NetworkError

        /// - Parameters:
        ///   - request: What to send, without its body.
        ///   - body: The body: bytes, or a file to stream.
        ///   - original: The request it was made from: where the answer's body goes, its
        ///     limits, where progress is reported.
        ///   - timeout: The time left until the deadline.
        ///   - timedOut: The error thrown when it passes.
        init(
            request: URLRequest, body: PreparedBody, original: HTTPRequest, timeout: Duration, timedOut: NetworkError
        ) {
            self.request = request
            self.body = body
            self.progress = original.progress
            self.sink = ResponseBodySink(for: original)
            self.timeout = timeout
            self.timedOut = timedOut
        }

        /// Makes, registers and resumes the task, unless the call was stopped already.
        func start(
            _ continuation: CheckedContinuation<HTTPResponse, any Error>, in session: URLSession,
            registry: SessionDelegate
        ) {
            lock.lock()
            if case .stoppedBeforeStart(let error) = state {
                state = .finished
                lock.unlock()
                continuation.resume(throwing: error)
                return
            }
            let task = makeTask(in: session)
            self.registry = registry
            registry.register(self, for: task)
            // A timer source, cancelled on completion, holds nothing once the call is over.
            let deadline = DispatchSource.makeTimerSource(queue: .global())
            deadline.schedule(deadline: .now() + timeout.seconds)
            deadline.setEventHandler { [weak self, timedOut] in self?.stop(timedOut) }
            state = .running(continuation, task, deadline)
            lock.unlock()
            deadline.resume()
            task.resume()
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
        /// limit) and stops the transfer. Safe on the delegate queue: the task is cancelled on
        /// ``URLSessionTransport/blockingCalls``, since `cancel()` waits for FoundationNetworking's
        /// work thread, which may itself be waiting for the delegate queue to drain.
        func stop(_ error: NetworkError) {
            lock.lock()
            switch state {
            case .idle:
                state = .stoppedBeforeStart(error)
                lock.unlock()
            case .running(let continuation, let task, let deadline):
                state = .finished
                let error = Self.attaching(head, to: error)
                _ = try? sink.finish()
                lock.unlock()
                deadline.cancel()
                // The caller is answered first: `cancel()` waits for FoundationNetworking's
                // process-wide work queue, which a flooding answer can keep busy for seconds.
                continuation.resume(throwing: error)
                registry?.forget(task)
                URLSessionTransport.blockingCalls.async { task.cancel() }
            case .stoppedBeforeStart, .finished:
                lock.unlock()
            }
        }

        /// Records the response head and opens the body's destination.
        func received(_ response: URLResponse) {
            let failure: NetworkError? = lock.withLock {
                guard case .running = state, let http = response as? HTTPURLResponse else { return nil }
                head = http
                do throws(NetworkError) {
                    try sink.begin(status: http.statusCode, headers: Self.headers(of: http))
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { stop(failure) }
        }

        /// Stores a piece of the body.
        func received(_ data: Data) {
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
            guard case .running(let continuation, _, let deadline) = state else {
                lock.unlock()
                return
            }
            state = .finished
            let head = override ?? self.head ?? fallback
            let collected = Result { () throws(NetworkError) in try sink.finish() }
            lock.unlock()
            deadline.cancel()
            if let error {
                continuation.resume(throwing: Self.attaching(head, to: Self.networkError(for: error)))
            } else if let head {
                continuation.resume(
                    with: collected.map { Self.httpResponse(head, body: $0.body, file: $0.file) }.mapError { $0 })
            } else {
                continuation.resume(throwing: NetworkError(.transport, "The answer is not an HTTP response."))
            }
        }

        /// An error with the status and headers of an answer that had begun, so a broken
        /// download can be resumed with its validator.
        private static func attaching(_ head: HTTPURLResponse?, to error: NetworkError) -> NetworkError {
            guard let head, error.status == nil else { return error }
            var error = error
            error.status = head.statusCode
            error.headers = headers(of: head)
            return error
        }

        private static func headers(of head: HTTPURLResponse) -> HTTPHeaders {
            var headers = HTTPHeaders()
            for (name, value) in head.allHeaderFields {
                headers.add(name: String(describing: name), value: String(describing: value))
            }
            return headers
        }

        private static func httpResponse(_ head: HTTPURLResponse, body: Data, file: URL?) -> HTTPResponse {
            var response = HTTPResponse(status: head.statusCode, headers: headers(of: head), body: body, url: head.url)
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
            case .cannotConnectToHost:
                return NetworkError(.transport, "The server refused the connection.", underlying: urlError)
            case .networkConnectionLost:
                return NetworkError(.transport, "The connection was lost.", underlying: urlError)
            case .cannotFindHost, .dnsLookupFailed:
                return NetworkError(.transport, "The host name could not be resolved.", underlying: urlError)
            case .badURL, .unsupportedURL:
                return NetworkError(.invalidRequest, "The URL is not supported.", underlying: urlError)
            default:
                // FoundationNetworking reports most libcurl failures as -1; curl's own words
                // ("transfer closed with 3000000 bytes remaining to read") are in the cause.
                let cause = (urlError.userInfo[NSUnderlyingErrorKey] as? NSError)?.localizedDescription
                let detail = cause.map { ": \($0)" } ?? ""
                // libcurl's own cap on a header block (300 KB in Debian's and newer builds).
                if cause?.hasPrefix("Too large response header") == true {
                    return NetworkError(
                        .responseTooLarge, "The answer's header is too large\(detail).", underlying: urlError)
                }
                return NetworkError(
                    .transport, "The transfer failed (URLError \(urlError.code.rawValue))\(detail).",
                    underlying: urlError)
            }
        }
    }
}
