import Foundation

/// A file that ``NetworkClient/download(_:to:overwrite:)`` stored at its destination.
public struct DownloadedFile: Sendable, Hashable {
    /// Where the file is: the destination asked for.
    public var url: URL
    /// Its size in bytes.
    public var byteCount: Int64
    /// The bytes an earlier, broken attempt had already stored that this one continued
    /// (0 when the whole body came in this attempt).
    public var resumedFrom: Int64
    /// The final answer's status (`200`, or `206` for a resumed download).
    public var status: Int
    /// The final answer's header fields.
    public var headers: HTTPHeaders
}

/// What a download does when its destination already exists.
public enum OverwritePolicy: Sendable, Hashable {
    /// Fail with ``NetworkError/Code/fileSystem`` before sending anything, and again at the end
    /// if the file appeared meanwhile. The default.
    case fail
    /// Replace the file, atomically, once the download is complete.
    case replace
}

/// What a broken download needs to continue: the bytes stored so far and the validator that
/// proves they still belong to the same resource. Found in ``NetworkError/resumeData`` when a
/// download fails on the way (connection lost, deadline); pass it to
/// ``NetworkClient/resumeDownload(_:)``.
///
/// The bytes sit in a hidden file next to the destination (`.NAME.courier-download-…`), never at
/// the destination itself. Call ``discard()`` when you will not resume.
public struct DownloadResumeData: Sendable {
    /// The endpoint downloaded.
    public let endpoint: DownloadEndpoint
    /// The destination asked for.
    public let destination: URL
    /// The destination policy asked for.
    public let overwrite: OverwritePolicy
    /// The file holding the bytes received so far.
    public let partialFile: URL
    /// How many bytes it holds.
    public let bytesReceived: Int64
    /// The `ETag` (preferred) or `Last-Modified` of the answer, sent as `If-Range`; without one
    /// the download starts over.
    public let validator: String?
    /// Whether the server said it takes byte ranges (it did not say `Accept-Ranges: none`).
    public let acceptsRanges: Bool

    /// Whether a resume asks for the remaining bytes (`Range` with `If-Range`) rather than
    /// starting over.
    public var continuesWithRange: Bool { validator != nil && acceptsRanges && bytesReceived > 0 }

    /// Removes the partial file.
    public func discard() { try? FileManager.default.removeItem(at: partialFile) }
}

/// What ``NetworkClient/download(_:to:overwrite:)`` fetches into a file: a request whose answer
/// is stored, not decoded. A type of its own, so that ``NetworkClient/send(_:)`` cannot be given
/// one by mistake (`client.send(.download("x"))` does not compile).
///
/// ```swift
/// extension DownloadEndpoint {
///     static func report(_ id: Int) -> Self { .download("reports/\(id).pdf") }
/// }
/// let file = try await client.download(.report(7), to: destination).value
/// ```
///
/// Its request has an ``Endpoint``'s parts, by the same names.
public struct DownloadEndpoint: Sendable {
    /// The request; its decoding is never used (the answer goes to a file).
    var endpoint: Endpoint<DownloadedFile>

    init(_ endpoint: Endpoint<DownloadedFile>) { self.endpoint = endpoint }

    /// A download of what `method` asks for.
    /// - Parameters:
    ///   - method: The method, `GET` unless the backend wants another.
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    ///   - body: The body, if any.
    public init(
        method: HTTPMethod = .get, path: String, query: Parameters = [:], headers: HTTPHeaders = [:],
        body: RequestBody = .none
    ) {
        endpoint = Endpoint(method: method, path: path, query: query, body: body, headers: headers, decoding: .toFile)
    }

    /// A `GET` whose answer is stored in a file.
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func download(_ path: String, query: Parameters = [:], headers: HTTPHeaders = [:]) -> Self {
        Self(path: path, query: query, headers: headers)
    }

    /// The HTTP method.
    public var method: HTTPMethod {
        get { endpoint.method }
        set { endpoint.method = newValue }
    }

    /// The path relative to the base URL, or an absolute URL.
    public var path: String {
        get { endpoint.path }
        set { endpoint.path = newValue }
    }

    /// The query parameters.
    public var query: Parameters {
        get { endpoint.query }
        set { endpoint.query = newValue }
    }

    /// The body.
    public var body: RequestBody {
        get { endpoint.body }
        set { endpoint.body = newValue }
    }

    /// The header fields.
    public var headers: HTTPHeaders {
        get { endpoint.headers }
        set { endpoint.headers = newValue }
    }

    /// The deadline for one attempt, when it is not the client's.
    public var timeout: Duration? {
        get { endpoint.timeout }
        set { endpoint.timeout = newValue }
    }

    /// Whether the request may be sent again after a failure (see ``Endpoint/isIdempotent``).
    public var isIdempotent: Bool {
        get { endpoint.isIdempotent }
        set { endpoint.isIdempotent = newValue }
    }

    /// The interceptor layers this download skips.
    public var skippedLayers: Set<InterceptorLayer> {
        get { endpoint.skippedLayers }
        set { endpoint.skippedLayers = newValue }
    }

    /// The most bytes one answer may add to the file; `nil`, the default, is no limit (the
    /// client's limit is for answers held in memory). A resumed download adds to the bytes it
    /// already has.
    public var maximumResponseBodySize: Int64? {
        get { endpoint.maximumResponseBodySize }
        set { endpoint.maximumResponseBodySize = newValue }
    }

    /// A copy that may be sent again after a failure (see ``Endpoint/idempotent()``).
    /// - Returns: The changed endpoint.
    public func idempotent() -> Self { Self(endpoint.idempotent()) }

    /// A copy that skips the given interceptor layers (see ``Endpoint/skipping(_:)``).
    /// - Parameter layers: The layers to skip.
    /// - Returns: The changed endpoint.
    public func skipping(_ layers: InterceptorLayer...) -> Self {
        var copy = self
        copy.endpoint.skippedLayers.formUnion(layers)
        return copy
    }

    /// A copy with its own deadline for one attempt (see ``Endpoint/timeout(_:)``).
    /// - Parameter timeout: The deadline.
    /// - Returns: The changed endpoint.
    public func timeout(_ timeout: Duration) -> Self { Self(endpoint.timeout(timeout)) }

    /// A copy with a limit on what one answer may add to the file (see
    /// ``maximumResponseBodySize``).
    /// - Parameter bytes: The most bytes.
    /// - Returns: The changed endpoint.
    public func maximumResponseBodySize(_ bytes: Int64) -> Self { Self(endpoint.maximumResponseBodySize(bytes)) }
}

extension ResponseDecoding where Response == DownloadedFile {
    /// The decoding of a ``DownloadEndpoint``'s request, never used: only
    /// ``NetworkClient/download(_:to:overwrite:)`` sends it, and stores the answer.
    static var toFile: Self {
        Self(checksContentType: false) { (_, _) throws(NetworkError) in
            throw NetworkError(
                .invalidRequest, "A download endpoint is sent with NetworkClient.download(_:to:), not send(_:).")
        }
    }
}
