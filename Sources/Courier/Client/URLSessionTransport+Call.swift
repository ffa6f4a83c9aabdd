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
        private var response: HTTPURLResponse?
        private var body = Data()
        private let request: URLRequest
        private let timeout: Duration
        private let timedOut: NetworkError

        /// - Parameters:
        ///   - request: What to send.
        ///   - timeout: The time left until the deadline.
        ///   - timedOut: The error thrown when it passes.
        init(request: URLRequest, timeout: Duration, timedOut: NetworkError) {
            self.request = request
            self.timeout = timeout
            self.timedOut = timedOut
        }

        /// Creates, registers and resumes the data task, unless the call was stopped already.
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
            let task = session.dataTask(with: request)
            self.registry = registry
            registry.register(self, for: task)
            // A timer source, cancelled on completion, holds nothing once the call is over.
            let deadline = DispatchSource.makeTimerSource(queue: .global())
            deadline.schedule(deadline: .now() + timeout.seconds)
            deadline.setEventHandler { [weak self, timedOut] in self?.stop(timedOut) }
            state = .running(continuation, task, deadline)
            task.resume()
            lock.unlock()
            deadline.resume()
        }

        /// Ends the call with an error (cancellation or deadline) and stops the transfer.
        func stop(_ error: NetworkError) {
            lock.lock()
            switch state {
            case .idle:
                state = .stoppedBeforeStart(error)
                lock.unlock()
            case .running(let continuation, let task, let deadline):
                state = .finished
                lock.unlock()
                deadline.cancel()
                registry?.forget(task)
                task.cancel()
                continuation.resume(throwing: error)
            case .stoppedBeforeStart, .finished:
                lock.unlock()
            }
        }

        /// Records the response head.
        func received(_ response: URLResponse) {
            lock.withLock {
                self.response = response as? HTTPURLResponse
                if response.expectedContentLength > 0, response.expectedContentLength < 64 << 20 {
                    body.reserveCapacity(Int(response.expectedContentLength))
                }
            }
        }

        /// Appends a piece of the body.
        func received(_ data: Data) {
            lock.withLock { body.append(data) }
        }

        /// Ends the call with what `URLSession` delivered: the response, or `error`.
        /// - Parameter response: A response to use instead of the one received (a 401 that
        ///   `URLSession` reports only through an authentication challenge).
        func complete(error: (any Error)?, response override: HTTPURLResponse? = nil) {
            lock.lock()
            guard case .running(let continuation, _, let deadline) = state else {
                lock.unlock()
                return
            }
            state = .finished
            let head = override ?? response
            let bytes = body
            lock.unlock()
            deadline.cancel()
            if let error {
                continuation.resume(throwing: Self.networkError(for: error))
            } else if let head {
                continuation.resume(returning: Self.httpResponse(head, body: bytes))
            } else {
                continuation.resume(throwing: NetworkError(.transport, "The answer is not an HTTP response."))
            }
        }

        private static func httpResponse(_ head: HTTPURLResponse, body: Data) -> HTTPResponse {
            var headers = HTTPHeaders()
            for (name, value) in head.allHeaderFields {
                headers.add(name: String(describing: name), value: String(describing: value))
            }
            return HTTPResponse(status: head.statusCode, headers: headers, body: body, url: head.url)
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
                return NetworkError(
                    .transport, "The transfer failed (URLError \(urlError.code.rawValue)).", underlying: urlError)
            }
        }
    }
}
