import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The session-level delegate. On Linux only a session delegate is asked about challenges
    /// and redirects; without one, a 401 with `WWW-Authenticate: Basic` hangs forever.
    final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        /// Answers an authentication challenge with default handling, which (with no credential
        /// storage) hands the 401 back to Courier at once.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            completionHandler(.performDefaultHandling, nil)
        }

        /// Follows a redirect under Courier's policy: see ``RedirectPolicy``.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            let original = task.originalRequest ?? request
            completionHandler(RedirectPolicy.follow(from: original, status: response.statusCode, to: request))
        }
    }
}

/// Courier's redirect rules, the same for every transport.
enum RedirectPolicy {
    /// The request to send for a redirect, or `nil` to stop and return the 3xx answer.
    ///
    /// - Credentials never reach another origin (scheme, host and port): `Authorization`,
    ///   `Proxy-Authorization`, `Cookie` and every header with a secret-looking name are removed.
    /// - 307 and 308 keep method and body, but only on the same origin; to another origin they
    ///   are not followed, so a body (a password, a payment) is neither lost nor leaked.
    static func follow(from original: URLRequest, status: Int, to proposed: URLRequest) -> URLRequest? {
        guard let from = original.url, let to = proposed.url else { return nil }
        let sameOrigin = origin(of: from) == origin(of: to)
        var next = proposed
        if status == 307 || status == 308 {
            guard sameOrigin else { return nil }
            next.httpMethod = original.httpMethod
            next.httpBody = original.httpBody
            for (name, value) in original.allHTTPHeaderFields ?? [:] {
                next.setValue(value, forHTTPHeaderField: name)
            }
        }
        if !sameOrigin {
            for name in (next.allHTTPHeaderFields ?? [:]).keys where isCredential(name) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return next
    }

    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    private static func isCredential(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "authorization" || lowered == "proxy-authorization" || lowered == "cookie"
            || Redaction.isSecret(lowered)
    }
}
