import Foundation

/// The one error type Courier throws.
///
/// A `NetworkError` has a ``code`` that says what kind of failure it is, and context that says
/// where: the request (method and URL, secrets redacted), the HTTP status, headers and body,
/// the business code and message of an envelope, the coding path of a decoding failure, and
/// the underlying error. ``description`` is safe to log: it never contains headers, and token,
/// password and signature values in URLs and body snippets are replaced by `<redacted>`.
///
/// ```swift
/// do {
///     show(try await client.send(.orders(page: 1)))
/// } catch where error.code == .business {  // `send` throws only NetworkError
///     print(error.businessCode ?? "none", error.message)
/// }
/// ```
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure an error is. An open set: compare with the static constants.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, for example `"timedOut"`.
        public let rawValue: String

        /// Creates a code from its name.
        /// - Parameter rawValue: The name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }

        /// The device is offline, so the request was not sent.
        public static let offline = Code(rawValue: "offline")
        /// The request's deadline passed (no answer, or an answer that never finished).
        public static let timedOut = Code(rawValue: "timedOut")
        /// The request was cancelled: its task, ``NetworkClient/cancelAll()``, or a logout or
        /// another login (see ``Session``) while it was under way.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The transport failed: connection refused or dropped, DNS, an invalid answer, …
        public static let transport = Code(rawValue: "transport")
        /// The TLS connection was refused: an untrusted certificate, a public key that matches
        /// no pin, a failed handshake.
        public static let tls = Code(rawValue: "tls")
        /// The server answered with a status code the endpoint does not accept.
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// The answer's `Content-Type` is not one the client accepts.
        public static let unacceptableContentType = Code(rawValue: "unacceptableContentType")
        /// The body could not be decoded into the expected type.
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// The envelope carried a code that is not a success code.
        public static let business = Code(rawValue: "business")
        /// The backend ended the session (an ask-the-user code, or a silent login that failed or
        /// did not help): nobody is signed in any more.
        public static let sessionExpired = Code(rawValue: "sessionExpired")
        /// The token could not be refreshed: the refresh failed every attempt, was refused, or
        /// ran past its limit.
        public static let tokenRefreshFailed = Code(rawValue: "tokenRefreshFailed")
        /// The session's ``TokenStore`` could not be read or written (a locked keychain, say).
        public static let credentialStore = Code(rawValue: "credentialStore")
        /// The answer is larger than the client accepts: a body past
        /// ``NetworkClient/Configuration/maximumResponseBodySize`` (or the endpoint's limit),
        /// counted after decoding, or a header block past ``HTTPResponse/maximumHeaderSize``.
        public static let responseTooLarge = Code(rawValue: "responseTooLarge")
        /// The request could not be built: bad URL, method, header or body.
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// A file could not be written or moved: a temporary upload body, a download that
        /// cannot be stored, or a download destination that exists and may not be replaced.
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// A list's paging went wrong: a page leads back to one the walk already read (a loop),
        /// or to a next page on an origin the app did not allow (see ``PagingOptions``).
        public static let paging = Code(rawValue: "paging")
    }

    /// What kind of failure this is.
    public var code: Code {
        get { fields.value.code }
        _modify { yield &fields.value.code }
    }
    /// A short human-readable explanation, free of secrets.
    public var message: String {
        get { fields.value.message }
        _modify { yield &fields.value.message }
    }
    /// The request as `METHOD URL`, with secret query values redacted.
    public var request: String? {
        get { fields.value.request }
        _modify { yield &fields.value.request }
    }
    /// The HTTP status of the answer, when one arrived.
    public var status: Int? {
        get { fields.value.status }
        _modify { yield &fields.value.status }
    }
    /// The answer's headers, when one arrived. Not part of ``description``.
    public var headers: HTTPHeaders? {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The answer's body, when one arrived. ``description`` shows a short redacted snippet.
    public var body: Data? {
        get { fields.value.body }
        _modify { yield &fields.value.body }
    }
    /// The business code of an envelope, or the `errorCode` of an error body.
    public var businessCode: BusinessCode? {
        get { fields.value.businessCode }
        _modify { yield &fields.value.businessCode }
    }
    /// The business message of an envelope, or the `errorDescription` of an error body.
    public var businessMessage: String? {
        get { fields.value.businessMessage }
        _modify { yield &fields.value.businessMessage }
    }
    /// Text an error body meant for the user (the `content` field some backends send).
    public var userMessage: String? {
        get { fields.value.userMessage }
        _modify { yield &fields.value.userMessage }
    }
    /// For a decoding failure, where it failed, for example `data.items[2].title`.
    public var codingPath: String? {
        get { fields.value.codingPath }
        _modify { yield &fields.value.codingPath }
    }
    /// The error that caused this one, when there is one.
    public var underlying: (any Error)? {
        get { fields.value.underlying }
        _modify { yield &fields.value.underlying }
    }
    /// For a download that broke after bytes arrived, what ``NetworkClient/resumeDownload(_:)``
    /// needs to continue it.
    public var resumeData: DownloadResumeData? {
        get { fields.value.resumeData }
        _modify { yield &fields.value.resumeData }
    }
    /// For a page of a list that could not be read (``NetworkClient/pages(_:items:paging:options:from:)``),
    /// where that page is: start again from it to read it and the rest of the list.
    public var pagePosition: PagePosition? {
        get { fields.value.pagePosition }
        _modify { yield &fields.value.pagePosition }
    }
    /// What ``description`` hides: the client's ``NetworkClient/Configuration/redactor`` for
    /// the errors it throws, ``Redactor/standard`` for others.
    public var redactor: Redactor {
        get { fields.value.redactor }
        _modify { yield &fields.value.redactor }
    }

    /// The stored properties, out of line (see ``CopyOnWrite``).
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var code: Code
        var message: String
        var request: String? = nil
        var status: Int? = nil
        var headers: HTTPHeaders? = nil
        var body: Data? = nil
        var businessCode: BusinessCode? = nil
        var businessMessage: String? = nil
        var userMessage: String? = nil
        var codingPath: String? = nil
        var underlying: (any Error)? = nil
        var resumeData: DownloadResumeData? = nil
        var pagePosition: PagePosition? = nil
        var redactor: Redactor = .standard
    }

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of failure it is.
    ///   - message: A short explanation, free of secrets.
    ///   - underlying: The error that caused it, if any.
    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        fields = CopyOnWrite(Fields(code: code, message: message, underlying: underlying))
    }

    /// A one-line summary, safe to log: code, message, request, status, business code and
    /// message, coding path and a redacted body snippet of at most ``snippetLimit`` bytes; each
    /// message cut to its first 2,048 characters.
    public var description: String {
        // The parts are joined with "; ": a message's own full stop would make it ".;".
        let sentence = message.hasSuffix(".") ? String(message.dropLast()) : message
        var parts = ["NetworkError.\(code): \(redacted(sentence))"]
        if let request { parts.append("request: \(redacted(request))") }
        if let status { parts.append("status: \(status)") }
        if let businessCode { parts.append("business code: \(Self.shown(businessCode))") }
        if let businessMessage { parts.append("business message: \(redacted(businessMessage))") }
        if let codingPath { parts.append("coding path: \(redacted(codingPath))") }
        if let body, !body.isEmpty {
            let excerpt = redactor.redact(body: body, contentType: headers?["Content-Type"], limit: Self.snippetLimit)
            parts.append("body: \(excerpt)")
        }
        if let underlying, !(underlying is NetworkError) {
            parts.append("underlying: \(redacted(String(describing: underlying)))")
        }
        return parts.joined(separator: "; ")
    }

    /// A code as the server sent it, on one line, without invisible formatting (a right-to-left
    /// override could make a log line read otherwise) and at most 64 characters long.
    private static func shown(_ code: BusinessCode) -> String {
        let hidden: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        let scalars = code.description.unicodeScalars.prefix(64).map {
            hidden.contains($0.properties.generalCategory) ? "?" : $0
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// The most characters of a message (the server's, the error's, its cause's) that the
    /// descriptions show: a server can send any length.
    static let messageLimit = 2_048

    /// `text` redacted, then cut to ``messageLimit`` characters.
    func redacted(_ text: String) -> String {
        redactor.redact(text: text, limit: Self.messageLimit)
    }

    /// The most bytes of a body that ``description`` shows.
    public static let snippetLimit = 512
}

extension NetworkError: LocalizedError {
    /// A short text for the app's user: what the backend wrote for the user (``userMessage``),
    /// or its message in an envelope or error body ("insufficient balance", "order not found")
    /// for a business code or a `4xx` status, the answers about the user's request (a `5xx`
    /// body's message is the server's own, often a stack trace, and is not shown); otherwise
    /// the error's message, except for an answer that could not be decoded, whose message names
    /// the app's types: then "The server's answer could not be read." Secret values are
    /// redacted; the request, headers and body are never in it. A text longer than 2,048
    /// characters is cut there.
    public var errorDescription: String? {
        let aboutTheRequest = code == .business || (code == .httpStatus && (400..<500).contains(status ?? 0))
        let backendMessage = aboutTheRequest ? businessMessage : nil
        if let backendText = [userMessage, backendMessage].compactMap({ $0 }).first(where: { !$0.isEmpty }) {
            return redactor.redact(message: backendText, limit: Self.messageLimit)
        }
        return code == .decodingFailed
            ? "The server's answer could not be read." : redactor.redact(message: message, limit: Self.messageLimit)
    }
}

extension NetworkError {
    /// A copy that also names the request, when it does not already, and hides what
    /// `redactor` hides.
    func describing(_ request: HTTPRequest, redactor: Redactor) -> NetworkError {
        var copy = self
        copy.redactor = redactor
        if copy.request == nil { copy.request = request.redactedDescription(redactor: redactor) }
        return copy
    }

    /// A copy that keeps the answer it is about: its status, header fields and body.
    func answered(by response: HTTPResponse) -> NetworkError {
        var copy = self
        copy.status = response.status
        copy.headers = response.headers
        copy.body = response.body
        return copy
    }

    /// Wraps any error as a `NetworkError`: a `NetworkError` is kept, a `CancellationError`
    /// becomes ``Code/cancelled``, anything else ``Code/transport``.
    static func wrapping(_ error: any Error) -> NetworkError {
        switch error {
        case let error as NetworkError: error
        case is CancellationError: NetworkError(.cancelled, "The request was cancelled.")
        default: NetworkError(.transport, "The transport failed.", underlying: error)
        }
    }
}

extension NetworkError: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}
