import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Courier's redirect rules, one set for every transport: a transport hands back a redirect
/// answer as it is, and the client (``SendContract``) asks ``next(after:for:hasBody:)`` for the
/// request that follows it.
///
/// - Only `http` and `https` are followed; a `Location` with another scheme (`file:`, `ftp:`)
///   or one that is not a URL fails with ``NetworkError/Code/transport``. A 3xx without
///   `Location` is the answer.
/// - 303, and 301/302 after a `POST`, continue as `GET` without a body. Every other redirect
///   keeps method and body (a `PUT` answered 301 sends its body again), but a request with a
///   body follows only on the same origin (scheme, host and port): to another origin the 3xx
///   is returned, so the body is neither lost nor leaked.
/// - Credentials never reach another origin: `Authorization`, `Proxy-Authorization`, `Cookie`
///   and every header with a secret-looking name are removed, and so is a `Host` set for the
///   first origin.
enum RedirectPolicy {
    /// The statuses that redirect.
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// How many redirects one request follows before failing.
    static let maximumRedirects = 10

    /// The request that follows a redirect answer, or `nil` when `response` is the answer
    /// (not a redirect, no `Location`, or a body that would go to another origin).
    /// - Parameters:
    ///   - response: The answer to `request`.
    ///   - request: The request just sent.
    ///   - hasBody: Whether it was sent with a body.
    /// - Throws: ``NetworkError/Code/transport`` for a `Location` that is not an `http` or
    ///   `https` URL.
    static func next(after response: HTTPResponse, for request: HTTPRequest, hasBody: Bool) throws(NetworkError)
        -> HTTPRequest?
    {
        guard statuses.contains(response.status), let location = response.headers["Location"] else { return nil }
        let from = try request.wireURL()
        guard let to = URL(string: location, relativeTo: from)?.absoluteURL else {
            throw NetworkError(.transport, "The server redirected to a Location that is not a URL.")
        }
        guard let scheme = to.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw NetworkError(
                .transport,
                "The server redirected to a \(to.scheme ?? "relative") URL; only http and https are followed.")
        }
        guard to.host?.isEmpty == false else {
            throw NetworkError(.transport, "The server redirected to a Location without a host.")
        }
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
            for field in request.headers where staysWithOrigin(field.name, request.redactor) {
                headers[field.name] = nil
            }
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
        a.origin == b.origin
    }

    private static func staysWithOrigin(_ name: String, _ redactor: Redactor) -> Bool {
        let lowered = name.lowercased()
        return lowered == "authorization" || lowered == "proxy-authorization" || lowered == "cookie"
            || lowered == "host" || Redactor.standard.isSecret(name) || redactor.isSecret(name)
    }
}
