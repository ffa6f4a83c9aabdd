import Foundation

/// A request as interceptors and transports see it: built from an ``Endpoint`` against the
/// client's base URL, with query and form parameters still structured.
///
/// ``wireURL()`` and ``HTTPBody/encoded`` give the exact URL and bytes that go on the wire.
public struct HTTPRequest: Sendable {
    /// The method.
    public var method: HTTPMethod {
        get { fields.value.method }
        _modify { yield &fields.value.method }
    }
    /// The URL without its query: scheme, host, port and percent-encoded path.
    public var url: URL {
        get { fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// The query parameters, unencoded, in order.
    public var query: Parameters {
        get { fields.value.query }
        _modify { yield &fields.value.query }
    }
    /// The header fields. `Content-Type` is added from the body when not set here.
    public var headers: HTTPHeaders {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body.
    public var body: HTTPBody {
        get { fields.value.body }
        _modify { yield &fields.value.body }
    }
    /// The overall deadline for one attempt: the whole answer must have arrived by then.
    public var timeout: Duration {
        get { fields.value.timeout }
        _modify { yield &fields.value.timeout }
    }
    /// Where the body of a successful (2xx) answer goes instead of memory, for downloads. An
    /// answer with another status is kept in memory, so it can be read as an error.
    public var download: DownloadTarget? {
        get { fields.value.download }
        _modify { yield &fields.value.download }
    }
    /// Where the transport reports upload and download progress, if anyone listens.
    public var progress: ProgressReporter? {
        get { fields.value.progress }
        _modify { yield &fields.value.progress }
    }
    /// The most bytes an answer's body kept in memory may have, counted after decoding
    /// (`gzip` and the like); a larger one fails with ``NetworkError/Code/responseTooLarge``.
    /// `nil` for no limit. A download's file has its own limit, ``DownloadTarget/maximumSize``.
    public var maximumResponseBodySize: Int64? {
        get { fields.value.maximumResponseBodySize }
        _modify { yield &fields.value.maximumResponseBodySize }
    }
    /// Whether sending this request twice is harmless (the endpoint's
    /// ``Endpoint/isIdempotent``; by default the method's). A transport must never repeat a
    /// request that is not, even on a kept-alive connection that turns out to be closed.
    public var isIdempotent: Bool {
        get { fields.value.isIdempotent }
        _modify { yield &fields.value.isIdempotent }
    }
    /// The names the sending client treats as secret (its ``NetworkClient/Configuration/redactor``):
    /// headers with such names do not follow a redirect to another origin.
    var redactor: Redactor {
        get { fields.value.redactor }
        _modify { yield &fields.value.redactor }
    }
    /// Set when the caller reads the answer's body as it arrives (``NetworkClient/stream(_:)``):
    /// a transport that can streams a 2xx answer into a channel (see ``StreamRequest``); one
    /// that cannot returns it whole, which the client hands on as one piece.
    var streaming: StreamRequest? {
        get { fields.value.streaming }
        _modify { yield &fields.value.streaming }
    }
    /// What the layers tell a recorder of traffic: the call this attempt belongs to, the
    /// secret values they added and the parameters that change on every attempt.
    package var notes: ExchangeNotes {
        get { fields.value.notes }
        _modify { yield &fields.value.notes }
    }
    /// The stored properties, out of line (see ``CopyOnWrite``).
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var method: HTTPMethod
        var url: URL
        var query: Parameters
        var headers: HTTPHeaders
        var body: HTTPBody
        var timeout: Duration
        var download: DownloadTarget? = nil
        var progress: ProgressReporter? = nil
        var maximumResponseBodySize: Int64? = nil
        var isIdempotent: Bool
        var redactor: Redactor = Redactor.standard
        var streaming: StreamRequest? = nil
        var notes: ExchangeNotes = ExchangeNotes()
        var timeline: TimelineRecorder? = nil
        var chosenTrace: TraceContext? = nil
        var sendsTrace = false
        var measuresExchange = false
    }

    /// Marks a value this request carries as secret: a recording of the traffic or a client's
    /// exported archive (``NetworkClient/recentTraffic()``) hides it wherever it appears (a
    /// header, the URL, a body; percent-encoded or JSON-escaped too), whatever name it is
    /// under. The session and signing layers mark the token and the signature they add; a layer
    /// of your own that adds a credential under a name ``Redactor`` does not know marks it too.
    /// A value shorter than 6 bytes is hidden only where it is a whole value: a header's (or
    /// what follows its scheme word, `Token abc`), or a `name=value` pair's in the URL, a form
    /// or a message.
    /// - Parameter value: The secret.
    public mutating func markAsSecret(_ value: String) {
        guard !value.isEmpty else { return }
        notes.secretValues.append(value)
    }

    /// The sending client's redactor, for a recorder of traffic.
    package var clientRedactor: Redactor { redactor }

    /// Creates a request.
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The URL; a query in it is moved into `query`, and goes on the wire as written. A
    ///     URL relative to a base is resolved against it first.
    ///   - query: Query parameters, appended after any in `url`.
    ///   - headers: Header fields.
    ///   - body: The body.
    ///   - timeout: The overall deadline for one attempt.
    public init(
        method: HTTPMethod, url: URL, query: Parameters = [:], headers: HTTPHeaders = [:],
        body: HTTPBody = .none, timeout: Duration = .seconds(30)
    ) {
        let url = url.baseURL == nil ? url : url.absoluteURL
        // Most URLs carry neither: they are used as they are, without taking them apart.
        guard url.query != nil || url.fragment != nil else {
            self.init(
                method: method, unqueriedURL: url, query: query, headers: headers, body: body, timeout: timeout)
            return
        }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var merged = Parameters()
        if let existing = components?.percentEncodedQuery {
            merged = Parameters.decoding(Substring(existing), keepsText: .whenChanged)
            components?.percentEncodedQuery = nil
        }
        merged.append(contentsOf: query)
        components?.fragment = nil
        self.init(
            method: method, unqueriedURL: components?.url ?? url, query: merged, headers: headers, body: body,
            timeout: timeout)
    }

    /// Creates a request from a URL that is known to carry no query or fragment.
    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    init(
        method: HTTPMethod, unqueriedURL: URL, query: Parameters, headers: HTTPHeaders, body: HTTPBody,
        timeout: Duration
    ) {
        fields = CopyOnWrite(
            Fields(
                method: method, url: unqueriedURL, query: query, headers: headers, body: body, timeout: timeout,
                isIdempotent: method.isIdempotent))
    }

    /// Checks that the request can go on the wire exactly as it is, so no value can change
    /// what is sent (a CR LF in a token that adds a header, a method that adds a request line).
    /// Every transport calls this before anything is sent; a custom transport should too.
    ///
    /// - The method is an RFC 9110 token.
    /// - Every header field that goes on the wire (``wireHeaders``, so the body's
    ///   `Content-Type` too) has a token for a name and a value free of control characters but
    ///   horizontal tab (``HTTPHeaders/isValid(_:)``).
    /// - No field sets how the message is framed or the connection kept
    ///   (``HTTPHeaders/transportOwnedNames``: `Content-Length`, `Transfer-Encoding`,
    ///   `Connection` and the like): the transport writes those, so a value cannot make the
    ///   server read part of the body as another request.
    /// - The URL is `http` or `https` with a host.
    /// - Throws: ``NetworkError/Code/invalidRequest`` naming the method or field (never a
    ///   field's value, which may be a secret).
    public func checkWireSafety() throws(NetworkError) {
        try Self.checkWireSafety(method: method, headers: headers)
        // The body's media type goes on the wire too, when no header sets one (see ``wireHeaders``).
        if let contentType = body.contentType,
            !HTTPHeaders.isValid(HTTPHeaders.Field(name: "Content-Type", value: contentType))
        {
            throw NetworkError(.invalidRequest, "The body's media type has control characters.")
        }
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw NetworkError(.invalidRequest, "Only http and https URLs with a host can be sent.")
        }
    }

    static func checkWireSafety(method: HTTPMethod, headers: HTTPHeaders) throws(NetworkError) {
        guard method.isValidToken else {
            throw NetworkError(.invalidRequest, "\(method.rawValue.debugDescription) is not a valid HTTP method.")
        }
        for field in headers {
            guard HTTPHeaders.isValid(field) else {
                throw NetworkError(
                    .invalidRequest,
                    "The header \(field.name.debugDescription) has an invalid name or a value with control characters.")
            }
            guard !HTTPHeaders.transportOwnedNames.contains(where: field.name.caseInsensitiveEquals) else {
                throw NetworkError(
                    .invalidRequest,
                    "The header \(field.name.debugDescription) is the transport's to write (it frames the message).")
            }
        }
    }

    /// The URL that goes on the wire: ``url`` with `.` and `..` segments (`%2E%2E` too) removed
    /// from its path (`/a/b/../c` is sent as `/a/c`, as libcurl would send it anyway) and ``query`` encoded by
    /// ``PercentEncoding``.
    /// - Throws: ``NetworkError`` with code ``NetworkError/Code/invalidRequest`` when the result
    ///   is not a valid URL.
    /// - Returns: The full URL.
    public func wireURL() throws(NetworkError) -> URL {
        let (text, base) = try wireURLText()
        guard !query.isEmpty else { return base }
        guard let full = URL(string: text) else {
            throw NetworkError(.invalidRequest, "The query does not form a valid URL.")
        }
        return full
    }

    /// The text of ``wireURL()``, with the URL before its query, for a transport that takes the
    /// URL as text (libcurl): the same bytes, without parsing them into a `URL` once more.
    func wireURLText() throws(NetworkError) -> (text: String, unqueried: URL) {
        let base = try unqueriedWireURL()
        return (query.isEmpty ? base.absoluteString : base.absoluteString + "?" + query.encoded, base)
    }

    /// The percent-encoded path that goes on the wire (`/` when empty), read from the text of
    /// the URL ``wireURL()`` starts with (``unqueriedWireURL()``, resolved against its base), as
    /// libcurl sends it: after `scheme://authority` (neither holds a `/`, `?` or `#`), up to the
    /// query or fragment. Text without a scheme is read as a path.
    static func wirePath(inText bytes: UnsafeBufferPointer<UInt8>) -> String {
        let slash = UInt8(ascii: "/")
        let colon = UInt8(ascii: ":")
        let isEnd = { (byte: UInt8) in byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") }
        var index = 0
        while index < bytes.count, bytes[index] != colon, bytes[index] != slash, !isEnd(bytes[index]) {
            index += 1
        }
        if index + 2 < bytes.count, bytes[index] == colon, bytes[index + 1] == slash, bytes[index + 2] == slash {
            index += 3
            while index < bytes.count, bytes[index] != slash, !isEnd(bytes[index]) { index += 1 }
        } else {
            index = 0  // no scheme and authority: the text is a path reference
        }
        var end = index
        while end < bytes.count, !isEnd(bytes[end]) { end += 1 }
        guard end > index else { return "/" }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
    }

    /// ``url`` with dot-segments removed from its path. The path is replaced as text, so the
    /// rest of the URL stays byte for byte as it was.
    func unqueriedWireURL() throws(NetworkError) -> URL {
        // A URL relative to a base set after the request was made is resolved here.
        let url = url.baseURL == nil ? url : url.absoluteURL
        // Every dot-segment starts with `/.` or `/%2E`; most URLs have none and are sent as they are.
        guard DotSegments.mayHoldDotSegment(url.absoluteString) else { return url }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let text = components.string, let range = components.rangeOfPath
        else { throw NetworkError(.invalidRequest, "The URL's path cannot be read.") }
        let path = String(text[range])
        let normalized = DotSegments.removed(from: path)
        guard normalized != path else { return url }
        guard let result = URL(string: text.replacingCharacters(in: range, with: normalized)) else {
            throw NetworkError(.invalidRequest, "The path without its dot-segments does not form a valid URL.")
        }
        return result
    }

    /// The header fields that go on the wire: ``headers`` plus the body's `Content-Type`
    /// when none is set.
    public var wireHeaders: HTTPHeaders { wireHeaders(contentType: body.contentType) }

    /// The header fields that go on the wire with a prepared body: ``headers`` plus
    /// `contentType` when none is set; a multipart body's type (with its boundary) always wins.
    /// - Parameter contentType: The prepared body's media type.
    /// - Returns: The header fields.
    public func wireHeaders(contentType: String?) -> HTTPHeaders {
        guard let contentType else { return headers }
        var result = headers
        if case .multipart = body {
            result["Content-Type"] = contentType
        } else if result["Content-Type"] == nil {
            result.append(name: "Content-Type", value: contentType)
        }
        return result
    }

    /// `METHOD URL` with secret query values and the URL's user name and password redacted,
    /// for errors and logs.
    public var redactedDescription: String { redactedDescription(redactor: .standard) }

    /// `METHOD URL` with the URL's user name, password and secret parameters hidden.
    /// - Parameter redactor: What to hide.
    /// - Returns: The description.
    public func redactedDescription(redactor: Redactor) -> String {
        "\(method.rawValue) \(redactedURL(redactor: redactor))"
    }

    /// The URL with its query as sent, redacted (see ``redactedDescription(redactor:)``).
    func redactedURL(redactor: Redactor) -> String {
        let suffix = query.isEmpty ? "" : "?" + query.encoded
        return redactor.redact(url: url.absoluteString + suffix)
    }
}

extension HTTPRequest {
    /// Where the request's timeline is recorded, when the client has observers.
    package var timeline: TimelineRecorder? {
        get { fields.value.timeline }
        _modify { yield &fields.value.timeline }
    }

    /// The trace the request belongs to, chosen once as it is made (``TraceContext/current``
    /// of the caller, or a new one) when the client has the trace-context layer: every attempt,
    /// and every request the layers send for it, is in this trace.
    var chosenTrace: TraceContext? {
        get { fields.value.chosenTrace }
        _modify { yield &fields.value.chosenTrace }
    }

    /// Whether its attempts carry a `traceparent`: set by the trace-context layer, so an
    /// endpoint that skips the layer sends none.
    var sendsTrace: Bool {
        get { fields.value.sendsTrace }
        _modify { yield &fields.value.sendsTrace }
    }

    /// Whether the request sends a trace or has a timeline. Not inlined, for the same reason
    /// as ``isTraced``.
    @inline(never)
    var isObserved: Bool { trace != nil || timeline != nil }

    /// Whether the request has a body. Not inlined, for the same reason as ``isTraced``.
    @inline(never)
    var hasBody: Bool { body != .none }

    /// Whether the request belongs to a trace (``chosenTrace``). Not inlined: the trace read
    /// would take room in the frame of the `async` function asking.
    @inline(never)
    var isTraced: Bool { chosenTrace != nil }

    /// The trace each attempt carries, when the layer sends it.
    var trace: TraceContext? { sendsTrace ? chosenTrace : nil }

    /// Whether the transport measures what it can beyond ``HTTPResponse/timings`` (the
    /// connection, the bytes, the moments it sees): for a timeline, or a log line with phases.
    var measuresExchange: Bool {
        get { fields.value.measuresExchange || timeline != nil }
        set { fields.value.measuresExchange = newValue }
    }
}

extension HTTPRequest: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}
