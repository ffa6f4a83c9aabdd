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
    public let endpoint: Endpoint<DownloadedFile>
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

extension Endpoint where Response == DownloadedFile {
    /// A `GET` whose answer is stored in a file by ``NetworkClient/download(_:to:overwrite:)``.
    ///
    /// ```swift
    /// extension Endpoint where Response == DownloadedFile {
    ///     static func report(_ id: Int) -> Self { .download("reports/\(id).pdf") }
    /// }
    /// ```
    /// - Parameters:
    ///   - path: The path relative to the base URL, or an absolute URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields.
    /// - Returns: The endpoint.
    public static func download(_ path: String, query: Parameters = [:], headers: HTTPHeaders = [:]) -> Self {
        Self(method: .get, path: path, query: query, headers: headers, decoding: .toFile)
    }
}

extension ResponseDecoding where Response == DownloadedFile {
    /// Placeholder decoding for download endpoints: only ``NetworkClient/download(_:to:overwrite:)``
    /// stores their answer, so ``NetworkClient/send(_:)`` refuses them.
    static var toFile: Self {
        Self(checksContentType: false) { (_, _) throws(NetworkError) in
            throw NetworkError(
                .invalidRequest, "A download endpoint is sent with NetworkClient.download(_:to:), not send(_:).")
        }
    }
}
