import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The digest of a file a request sends as its body, for its signature.
enum FileDigest {
    /// The lower-case hex SHA-256 of a regular file's bytes, read a piece at a time through one
    /// descriptor opened without blocking, so a pipe swapped in for it is refused rather than
    /// waited on, and stopped when `cancellation` is raised.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when it is not a regular file that can be
    ///   read whole; ``NetworkError/Code/cancelled``.
    static func sha256(of url: URL, cancellation: Blocking.Flag? = nil) throws(NetworkError) -> String {
        let unreadable = NetworkError(
            .invalidRequest, "The file \(url.lastPathComponent) could not be read to sign it.")
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw unreadable }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw unreadable }
        // A regular file: read it blocking, so a lease on it is waited for, not taken for an error.
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw unreadable }
        var hash = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            try cancellation?.check()
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return hash.finalize().hexString }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw unreadable
            }
            buffer.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }
}
