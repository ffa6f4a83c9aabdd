import Foundation

/// Where a transport writes the body of a successful answer: a file, from its start or, for a
/// resumed download, from ``offset``.
///
/// - A `200` (or any 2xx but `206`) replaces the file's content from byte 0.
/// - A `206` must carry `Content-Range: bytes OFFSET-LAST/TOTAL` (TOTAL may be `*`) that agrees
///   with its `Content-Length`; its bytes are written from ``offset``. Any other range fails
///   with ``NetworkError/Code/transport``.
/// - The file is created afresh (mode 0600, never through a symbolic link) unless a `206`
///   continues it.
public struct DownloadTarget: Sendable, Hashable {
    /// The file written; created when missing.
    public var file: URL
    /// The bytes already in the file that a `206` answer continues.
    public var offset: Int64
    /// The most bytes this answer's body may bring (after decoding), or `nil` for no limit;
    /// more fail with ``NetworkError/Code/responseTooLarge``.
    public var maximumSize: Int64?

    /// Creates a target.
    /// - Parameters:
    ///   - file: The file written.
    ///   - offset: The bytes already there that a `206` continues; 0 for a fresh download.
    ///   - maximumSize: The most bytes the body may bring, or `nil` for no limit.
    public init(file: URL, offset: Int64 = 0, maximumSize: Int64? = nil) {
        self.file = file
        self.offset = offset
        self.maximumSize = maximumSize
    }
}
