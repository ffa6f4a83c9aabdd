import Foundation

extension Endpoint {
    /// Builds the request this endpoint describes against a base URL.
    /// - Throws: ``NetworkError`` ``NetworkError/Code/invalidRequest`` for a bad method, URL,
    ///   header or body.
    func makeRequest(base: URLJoiner.Base, encoder: JSONEncoder, defaultTimeout: Duration) throws(NetworkError)
        -> HTTPRequest
    {
        let target = try URLJoiner.join(base: base, path: path)
        var parameters = target.query
        parameters.append(contentsOf: query)
        let timeout = timeout ?? defaultTimeout
        guard timeout > .zero else {
            throw NetworkError(.invalidRequest, "The timeout must be positive, not \(timeout).")
        }
        var request = HTTPRequest(
            method: method, unqueriedURL: target.url, query: parameters, headers: headers,
            body: try body.httpBody(encoder: encoder), timeout: timeout)
        request.isIdempotent = isIdempotent
        // Checked again at the transport, after the interceptors; here it fails before any of them runs.
        try request.checkWireSafety()
        return request
    }
}

/// Joins endpoint paths to a base URL.
package enum URLJoiner {
    /// A base URL taken apart once per client, so each request only appends its path.
    package struct Base: Sendable {
        /// The base without query or fragment, as written.
        let text: String
        /// ``text`` without trailing slashes.
        let trimmed: String
        /// The base URL's own query parameters.
        let query: Parameters
        /// Whether the base is an `http(s)` URL.
        let isHTTP: Bool

        package init(_ url: URL) {
            let (part, query) = URLJoiner.split(url.absoluteString)
            text = String(part)
            var trimmed = text
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            self.trimmed = trimmed
            self.query = Parameters.decoding(query ?? "")
            isHTTP = URLJoiner.hasHTTPScheme(part)
        }
    }

    /// Joins `path` to the base with exactly one `/`, or parses `path` alone when it is an
    /// absolute `http(s)` URL. Queries of the base URL and the path are returned in order; a
    /// fragment is dropped (it never goes to a server).
    package static func join(base: Base, path: String) throws(NetworkError) -> (url: URL, query: Parameters) {
        let (pathPart, pathQuery) = split(path)
        let isAbsolute = hasHTTPScheme(pathPart)
        var query = Parameters()
        let text: String
        if isAbsolute {
            text = PercentEncoding.encodePath(pathPart)
        } else {
            guard base.isHTTP else {
                let shown = Redactor.standard.redact(url: base.text)
                throw NetworkError(.invalidRequest, "The base URL \(shown) is not an http(s) URL.")
            }
            query = base.query
            let relative = pathPart.drop { $0 == "/" }
            let joins = !relative.isEmpty || pathPart.hasPrefix("/")
            text = joins ? base.trimmed + "/" + PercentEncoding.encodePath(relative) : base.text
        }
        query.append(contentsOf: Parameters.decoding(pathQuery ?? ""))
        guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
            throw NetworkError(.invalidRequest, "\"\(Redactor.standard.redact(url: path))\" does not form a valid URL.")
        }
        return (url, query)
    }

    /// Splits URL text at its first `?` into path and query, dropping any `#fragment`.
    static func split(_ text: some StringProtocol) -> (Substring, Substring?) {
        let unfragmented = text[..<(text.firstIndex(of: "#") ?? text.endIndex)]
        let withoutFragment = Substring(unfragmented)
        guard let mark = withoutFragment.firstIndex(of: "?") else { return (withoutFragment, nil) }
        return (withoutFragment[..<mark], withoutFragment[withoutFragment.index(after: mark)...])
    }

    fileprivate static func hasHTTPScheme(_ text: Substring) -> Bool {
        let lowered = text.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }
}
