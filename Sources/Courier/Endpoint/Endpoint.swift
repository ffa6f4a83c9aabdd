import Foundation

/// A typed description of one call to the backend: method, path, parameters, body, headers,
/// timeout, and how the answer is decoded into `Response`.
///
/// Declare endpoints as static factories and send them with ``NetworkClient/send(_:)``:
///
/// ```swift
/// struct Order: Codable, Sendable { let id: Int; let title: String }
///
/// extension Endpoint where Response == [Order] {
///     static func orders(page: Int) -> Self { .get("orders", query: ["page": "\(page)"]) }
/// }
///
/// let orders = try await client.send(.orders(page: 1))
/// ```
///
/// The path is joined to the client's base URL with exactly one `/` between them, whatever
/// slashes either side has. A path that starts with `http://` or `https://` is used as it is.
/// The path is URL text: `%XX` escapes in it are kept, spaces, non-ASCII text and other
/// characters a URL cannot hold are percent-encoded, and a `#fragment` is dropped (it never
/// goes to a server). A query in the path (`search?q=a`) is merged before ``query``. Values in ``query`` and in forms are plain text, encoded by
/// ``PercentEncoding``.
public struct Endpoint<Response: Sendable>: Sendable {
    /// The method.
    public var method: HTTPMethod {
        get { fields.value.method }
        _modify { yield &fields.value.method }
    }
    /// The path relative to the base URL, or an absolute `http(s)` URL.
    public var path: String {
        get { fields.value.path }
        _modify { yield &fields.value.path }
    }
    /// Query parameters, in order, after any query in ``path``.
    public var query: Parameters {
        get { fields.value.query }
        _modify { yield &fields.value.query }
    }
    /// The body.
    public var body: RequestBody {
        get { fields.value.body }
        _modify { yield &fields.value.body }
    }
    /// Header fields for this endpoint. They win over the client's headers.
    public var headers: HTTPHeaders {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The overall deadline for this endpoint, or `nil` for the client's default.
    public var timeout: Duration? {
        get { fields.value.timeout }
        _modify { yield &fields.value.timeout }
    }
    /// How the answer is decoded.
    public var decoding: ResponseDecoding<Response> {
        get { fields.value.decoding }
        _modify { yield &fields.value.decoding }
    }
    /// Whether sending this request twice is harmless, so it may be retried. Unless set, what
    /// the current ``method`` says: `true` for `GET`, `HEAD`, `PUT`, `DELETE` and `OPTIONS`; a
    /// `POST` opts in with ``idempotent()``.
    public var isIdempotent: Bool {
        get { fields.value.idempotence ?? method.isIdempotent }
        set { fields.value.idempotence = newValue }
    }
    /// The interceptor layers this endpoint opts out of, for example ``InterceptorLayer/token``
    /// for the endpoint that fetches the token.
    public var skippedLayers: Set<InterceptorLayer> {
        get { fields.value.skippedLayers }
        _modify { yield &fields.value.skippedLayers }
    }
    /// The most bytes this endpoint's answer body may have, counted after decoding, or `nil`
    /// for the client's ``NetworkClient/Configuration/maximumResponseBodySize`` (for a
    /// download: no limit on the file).
    public var maximumResponseBodySize: Int64? {
        get { fields.value.maximumResponseBodySize }
        _modify { yield &fields.value.maximumResponseBodySize }
    }
    /// How this endpoint uses the client's ``NetworkClient/Configuration/cache``;
    /// ``CachePolicy/networkOnly`` by default. See ``caching(_:)``.
    public var cachePolicy: CachePolicy {
        get { fields.value.cachePolicy }
        _modify { yield &fields.value.cachePolicy }
    }
    /// Whether an identical request of the same client already in flight (the same method, URL,
    /// query, headers, body, deadline and skipped layers) answers this one too, so the two share
    /// one transfer. Unless set, what the current ``method`` says: `true` for `GET` and `HEAD`,
    /// `false` for other methods; see ``sharingIdenticalRequests(_:)``.
    public var sharesIdenticalRequests: Bool {
        get { fields.value.sharing ?? (method == .get || method == .head) }
        set { fields.value.sharing = newValue }
    }

    /// The stored properties, out of line (see ``CopyOnWrite``).
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var method: HTTPMethod
        var path: String
        var query: Parameters
        var body: RequestBody
        var headers: HTTPHeaders
        var timeout: Duration? = nil
        var decoding: ResponseDecoding<Response>
        var idempotence: Bool? = nil
        var skippedLayers: Set<InterceptorLayer> = []
        var maximumResponseBodySize: Int64? = nil
        var cachePolicy: CachePolicy = .networkOnly
        var sharing: Bool? = nil
    }

    /// Creates an endpoint with any method.
    /// - Parameters:
    ///   - method: The method, for example `.get` or `HTTPMethod("PROPFIND")`.
    ///   - path: The path relative to the base URL, or an absolute `http(s)` URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields that win over the client's.
    ///   - timeout: The overall deadline, or `nil` for the client's default.
    ///   - decoding: How the answer is decoded.
    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    public init(
        method: HTTPMethod, path: String, query: Parameters = [:], body: RequestBody = .none,
        headers: HTTPHeaders = [:], timeout: Duration? = nil, decoding: ResponseDecoding<Response>
    ) {
        fields = CopyOnWrite(
            Fields(
                method: method, path: path, query: query, body: body, headers: headers, timeout: timeout,
                decoding: decoding))
    }

    /// A copy marked as safe to send twice (for example a `POST` with an idempotency key), so the
    /// retry layer may retry it.
    /// - Returns: The changed endpoint.
    public func idempotent() -> Self {
        var copy = self
        copy.isIdempotent = true
        return copy
    }

    /// A copy that shares, or does not share, a transfer with an identical request in flight.
    ///
    /// With sharing, the default for `GET` and `HEAD`, a screen and a prefetch asking for the
    /// same page at once make one request. Each caller decodes the answer itself; a caller that
    /// is cancelled stops waiting at once, and the transfer is cancelled only when every caller
    /// waiting for it is. Share only what is safe to answer twice with one answer: a `POST` that
    /// reads (``idempotent()``), say, never one that places an order. Turn it off for a `GET`
    /// whose every call must reach the server (a poll that counts, say).
    ///
    /// The match is made before the token is added, and only requests of one session epoch
    /// share a transfer (see ``Session``): after a logout or a login no request joins one that
    /// began before. Requests that differ in whether they may be sent twice
    /// (``isIdempotent``) never share. A caller that joins gets the transfer's outcome,
    /// its deadline included: a late caller may see it time out before its own deadline would
    /// have passed.
    /// - Parameter shares: Whether to share.
    /// - Returns: The changed endpoint.
    public func sharingIdenticalRequests(_ shares: Bool) -> Self {
        var copy = self
        copy.sharesIdenticalRequests = shares
        return copy
    }

    /// A copy that opts out of interceptor layers.
    /// - Parameter layers: The layers to skip.
    /// - Returns: The changed endpoint.
    public func skipping(_ layers: InterceptorLayer...) -> Self {
        var copy = self
        copy.skippedLayers.formUnion(layers)
        return copy
    }

    /// A copy with its own limit on the answer's body (counted after decoding); for a download,
    /// the limit on the file.
    /// - Parameter bytes: The most bytes.
    /// - Returns: The changed endpoint.
    public func maximumResponseBodySize(_ bytes: Int64) -> Self {
        var copy = self
        copy.maximumResponseBodySize = bytes
        return copy
    }

    /// A copy with another overall deadline.
    /// - Parameter timeout: The deadline for the whole answer.
    /// - Returns: The changed endpoint.
    public func timeout(_ timeout: Duration) -> Self {
        var copy = self
        copy.timeout = timeout
        return copy
    }
}

extension Endpoint {
    /// A `GET` endpoint decoded as `decoding` says (``ResponseDecoding/response``,
    /// ``ResponseDecoding/text``, …); for a `Decodable` payload `decoding` may be left out.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    ///   - decoding: How the answer is decoded.
    /// - Returns: The endpoint.
    public static func get(
        _ path: String, query: Parameters = [:], headers: HTTPHeaders = [:], decoding: ResponseDecoding<Response>
    ) -> Self {
        Self(method: .get, path: path, query: query, headers: headers, decoding: decoding)
    }

    /// A `POST` endpoint decoded as `decoding` says; for a `Decodable` payload `decoding` may
    /// be left out.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    ///   - decoding: How the answer is decoded.
    /// - Returns: The endpoint.
    public static func post(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:],
        decoding: ResponseDecoding<Response>
    ) -> Self {
        Self(method: .post, path: path, query: query, body: body, headers: headers, decoding: decoding)
    }

    /// A `PUT` endpoint decoded as `decoding` says; for a `Decodable` payload `decoding` may
    /// be left out.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    ///   - decoding: How the answer is decoded.
    /// - Returns: The endpoint.
    public static func put(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:],
        decoding: ResponseDecoding<Response>
    ) -> Self {
        Self(method: .put, path: path, query: query, body: body, headers: headers, decoding: decoding)
    }

    /// A `PATCH` endpoint decoded as `decoding` says; for a `Decodable` payload `decoding` may
    /// be left out.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    ///   - decoding: How the answer is decoded.
    /// - Returns: The endpoint.
    public static func patch(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:],
        decoding: ResponseDecoding<Response>
    ) -> Self {
        Self(method: .patch, path: path, query: query, body: body, headers: headers, decoding: decoding)
    }

    /// A `DELETE` endpoint decoded as `decoding` says; for a `Decodable` payload `decoding`
    /// may be left out.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body, for backends that read one on `DELETE`.
    ///   - headers: Header fields.
    ///   - decoding: How the answer is decoded.
    /// - Returns: The endpoint.
    public static func delete(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:],
        decoding: ResponseDecoding<Response>
    ) -> Self {
        Self(method: .delete, path: path, query: query, body: body, headers: headers, decoding: decoding)
    }
}

extension Endpoint where Response: Decodable {
    /// A `GET` endpoint whose answer is an envelope.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func get(_ path: String, query: Parameters = [:], headers: HTTPHeaders = [:]) -> Self {
        get(path, query: query, headers: headers, decoding: .envelope)
    }

    /// A `POST` endpoint whose answer is an envelope.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func post(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:]
    ) -> Self {
        post(path, query: query, body: body, headers: headers, decoding: .envelope)
    }

    /// A `PUT` endpoint whose answer is an envelope.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func put(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:]
    ) -> Self {
        put(path, query: query, body: body, headers: headers, decoding: .envelope)
    }

    /// A `PATCH` endpoint whose answer is an envelope.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func patch(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:]
    ) -> Self {
        patch(path, query: query, body: body, headers: headers, decoding: .envelope)
    }

    /// A `DELETE` endpoint whose answer is an envelope.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - body: The body, for backends that read one on `DELETE`.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func delete(
        _ path: String, query: Parameters = [:], body: RequestBody = .none, headers: HTTPHeaders = [:]
    ) -> Self {
        delete(path, query: query, body: body, headers: headers, decoding: .envelope)
    }
}

extension Endpoint where Response == HTTPResponse {
    /// A `HEAD` endpoint: the answer has no body, so it returns the status and headers.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func head(_ path: String, query: Parameters = [:], headers: HTTPHeaders = [:]) -> Self {
        Self(method: .head, path: path, query: query, headers: headers, decoding: .response)
    }
}

extension Endpoint: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}
