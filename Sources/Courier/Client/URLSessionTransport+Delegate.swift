import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The session-level delegate: routes each task's callbacks to its ``Call``.
    ///
    /// On Linux only a session delegate is asked about challenges and redirects. A 401 with
    /// `WWW-Authenticate: Basic` arrives as a challenge that hangs forever under default handling,
    /// so the delegate completes the call with the 401 and its body (already received) and
    /// cancels the challenge.
    ///
    /// `@unchecked Sendable`: `calls` is guarded by `lock`.
    final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [Int: Call] = [:]

        func register(_ call: Call, for task: URLSessionTask) {
            lock.withLock { calls[task.taskIdentifier] = call }
        }

        /// Stops routing a task's callbacks (its call has ended early).
        func forget(_ task: URLSessionTask) {
            _ = lock.withLock { calls.removeValue(forKey: task.taskIdentifier) }
        }

        private func call(for task: URLSessionTask) -> Call? {
            lock.withLock { calls[task.taskIdentifier] }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            call(for: dataTask)?.received(response)
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            call(for: dataTask)?.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let call = lock.withLock { calls.removeValue(forKey: task.taskIdentifier) }
            call?.complete(error: error)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            if let failure = challenge.failureResponse as? HTTPURLResponse {
                call(for: task)?.complete(error: nil, response: failure)
            }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            call(for: task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            let original = task.originalRequest ?? request
            let hasBody = call(for: task)?.hasBody ?? (original.httpBody != nil)
            completionHandler(
                RedirectPolicy.follow(from: original, hasBody: hasBody, status: response.statusCode, to: request))
        }
    }
}

extension URLSessionTransport {
    /// The delegate queue, with backpressure.
    ///
    /// FoundationNetworking hands every 16 KB body piece to the delegate queue with
    /// `addOperation` from its own work thread and never waits. When the delegate falls behind
    /// (a download written to a disk that stalls on writeback), pieces pile up in memory: 1 GB
    /// downloads were seen to grow the process by 230–340 MB. Here `addOperation` makes that
    /// thread wait while more than ``limit`` operations are queued, so libcurl stops reading the
    /// socket and TCP slows the server down instead. Each wait is bounded (``maximumWait``), so
    /// a delegate operation that itself waits for the work thread (a cancel) can never deadlock.
    ///
    /// `@unchecked Sendable`: adds no state to `OperationQueue`, which is thread-safe.
    final class DelegateQueue: OperationQueue, @unchecked Sendable {
        /// Queued operations (about 1 MB of body pieces) above which the caller waits.
        static let limit = 64
        /// The longest one `addOperation` waits.
        static let maximumWait = Duration.seconds(1)

        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            super.addOperation(block)
            guard operationCount > Self.limit else { return }
            let deadline = ContinuousClock.now + Self.maximumWait
            while operationCount > Self.limit, ContinuousClock.now < deadline {
                usleep(200)
            }
        }
    }
}

/// Courier's redirect rules, the same for every transport.
///
/// - Credentials never reach another origin (scheme, host and port): `Authorization`,
///   `Proxy-Authorization`, `Cookie` and every header with a secret-looking name are removed.
/// - 307 and 308 keep method and body, but only on the same origin; to another origin they are
///   not followed (the 3xx is returned), so a body (a password, a payment) is neither lost nor
///   leaked. FoundationNetworking drops the body of every redirect, so the transport replays
///   307/308 with a body itself (``replay(_:location:)``).
enum RedirectPolicy {
    /// The request `URLSession` should send for a redirect, or `nil` to stop and return the 3xx.
    static func follow(from original: URLRequest, hasBody: Bool, status: Int, to proposed: URLRequest) -> URLRequest? {
        guard let from = original.url, let to = proposed.url else { return nil }
        if status == 307 || status == 308 {
            // Without a body URLSession keeps the method; with one, the transport replays it.
            guard isSameOrigin(from, to), !hasBody else { return nil }
            return proposed
        }
        var next = proposed
        if !isSameOrigin(from, to) {
            for name in (next.allHTTPHeaderFields ?? [:]).keys where isCredential(name) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }

    /// The request that repeats `request` (method, headers, body) at a 307/308 `location` on
    /// the same origin, or `nil` when it must not be followed.
    static func replay(_ request: URLRequest, location: String?) -> URLRequest? {
        guard let location, let from = request.url, let to = URL(string: location, relativeTo: from)?.absoluteURL,
            isSameOrigin(from, to)
        else { return nil }
        var next = request
        next.url = to
        return next
    }

    private static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(of url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
        }
        return origin(of: a) == origin(of: b)
    }

    private static func isCredential(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "authorization" || lowered == "proxy-authorization" || lowered == "cookie"
            || Redaction.isSecret(lowered)
    }
}
