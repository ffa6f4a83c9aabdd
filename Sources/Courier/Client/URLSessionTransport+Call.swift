import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// One request's life: not started → running → finished, whichever of completion,
    /// cancellation and the deadline comes first. The caller is answered exactly once, at once;
    /// `URLSession` is told to stop only while its task is still running, so a late cancel
    /// never races FoundationNetworking's own completion.
    ///
    /// `@unchecked Sendable`: all mutable state is guarded by `lock`.
    final class Call: @unchecked Sendable {
        private enum State {
            case idle
            case stoppedBeforeStart(NetworkError)
            case running(CheckedContinuation<HTTPResponse, any Error>, URLSessionDataTask, DispatchWorkItem)
            case finished
        }

        private let lock = NSLock()
        private var state = State.idle
        private let session: URLSession
        private let request: URLRequest
        private let timeout: Duration

        init(session: URLSession, request: URLRequest, timeout: Duration) {
            self.session = session
            self.request = request
            self.timeout = timeout
        }

        /// Creates and resumes the data task, unless the call was stopped already.
        func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
            lock.lock()
            if case .stoppedBeforeStart(let error) = state {
                state = .finished
                lock.unlock()
                continuation.resume(throwing: error)
                return
            }
            let task = session.dataTask(with: request) { [self] data, response, error in
                complete(data: data, response: response, error: error)
            }
            let seconds = timeout.seconds
            let deadline = DispatchWorkItem { [self] in
                stop(NetworkError(.timedOut, "No complete answer within \(seconds) s."))
            }
            state = .running(continuation, task, deadline)
            task.resume()
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
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
                task.cancel()
                continuation.resume(throwing: error)
            case .stoppedBeforeStart, .finished:
                lock.unlock()
            }
        }

        /// Ends the call with what `URLSession` delivered.
        private func complete(data: Data?, response: URLResponse?, error: (any Error)?) {
            lock.lock()
            guard case .running(let continuation, _, let deadline) = state else {
                lock.unlock()
                return
            }
            state = .finished
            lock.unlock()
            deadline.cancel()
            continuation.resume(with: Self.result(data: data, response: response, error: error))
        }

        private static func result(data: Data?, response: URLResponse?, error: (any Error)?)
            -> Result<HTTPResponse, any Error>
        {
            if let error { return .failure(Self.networkError(for: error)) }
            guard let http = response as? HTTPURLResponse else {
                return .failure(NetworkError(.transport, "The answer is not an HTTP response."))
            }
            var headers = HTTPHeaders()
            for (name, value) in http.allHeaderFields {
                headers.add(name: String(describing: name), value: String(describing: value))
            }
            return .success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data(), url: http.url))
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
                return NetworkError(.transport, "The transfer failed (URLError \(urlError.code.rawValue)).", underlying: urlError)
            }
        }
    }
}
