import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Courier's redirect rules, the same for every transport.
///
/// - Credentials never reach another origin (scheme, host and port): `Authorization`,
///   `Proxy-Authorization`, `Cookie` and every header with a secret-looking name are removed.
/// - 307 and 308 keep method and body, but only on the same origin; to another origin they are
///   not followed (the 3xx is returned), so a body (a password, a payment) is neither lost nor
///   leaked. FoundationNetworking drops the body of every redirect, so `URLSessionTransport`
///   replays 307/308 with a body itself (``next(after:for:hasBody:)``).
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

    /// The request that follows a redirect answer for a transport that does not follow
    /// redirects itself, or `nil` to return the 3xx as it is: 303 (and 301/302 after a
    /// `POST`) continue as `GET` without a body; 307/308, and other methods with a body, keep
    /// method and body on the same origin only; credentials never go to another origin.
    static func next(after response: HTTPResponse, for request: HTTPRequest, hasBody: Bool) -> HTTPRequest? {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"],
            let from = try? request.wireURL(), let to = URL(string: location, relativeTo: from)?.absoluteURL,
            ["http", "https"].contains(to.scheme?.lowercased() ?? "")
        else { return nil }
        var method = request.method
        var keepsBody = hasBody
        if response.status == 303 && method != .head
            || (response.status == 301 || response.status == 302) && method == .post
        {
            method = .get
            keepsBody = false
        }
        if keepsBody && !isSameOrigin(from, to) { return nil }
        var headers = request.headers
        if !isSameOrigin(from, to) {
            for field in request.headers where isCredential(field.name) { headers[field.name] = nil }
        }
        if !keepsBody { headers["Content-Type"] = nil }
        // Everything else (deadline, download target, limits, progress) carries over.
        let target = HTTPRequest(method: method, url: to)
        var next = request
        next.method = method
        next.url = target.url
        next.query = target.query
        next.headers = headers
        next.body = keepsBody ? request.body : .none
        next.isIdempotent = method == request.method ? request.isIdempotent : method.isIdempotent
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
