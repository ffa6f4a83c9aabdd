import Foundation

/// Where a transport writes the body of a successful answer: a file, from its start or, for a
/// resumed download, from ``offset``.
///
/// - A `200` (or any 2xx but `206`) replaces the file's content from byte 0.
/// - A `206` must carry `Content-Range: bytes OFFSET-…`; its bytes are written from ``offset``.
///   A range starting elsewhere fails with ``NetworkError/Code/transport``.
public struct DownloadTarget: Sendable, Hashable {
    /// The file written; created when missing.
    public var file: URL
    /// The bytes already in the file that a `206` answer continues.
    public var offset: Int64

    /// Creates a target.
    /// - Parameters:
    ///   - file: The file written.
    ///   - offset: The bytes already there that a `206` continues; 0 for a fresh download.
    public init(file: URL, offset: Int64 = 0) {
        self.file = file
        self.offset = offset
    }
}
