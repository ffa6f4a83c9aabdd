import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files Courier writes for one request (a download's partial file, a multipart body): created
/// by this process alone, readable by its user alone (0600) from the first instant, never
/// through a symbolic link, and not inherited by child processes.
enum PrivateFile {
    /// Creates a new file at `url` for writing, replacing whatever is there (a file or a link,
    /// which is removed, not followed).
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be created.
    static func create(at url: URL) throws(NetworkError) -> FileHandle {
        _ = unlink(url.path)
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        return try handle(descriptor, url)
    }

    /// Opens the existing file at `url` for writing, refusing a symbolic link.
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be opened.
    static func openExisting(at url: URL) throws(NetworkError) -> FileHandle {
        try handle(open(url.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), url)
    }

    private static func handle(_ descriptor: Int32, _ url: URL) throws(NetworkError) -> FileHandle {
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw NetworkError(.fileSystem, "The file \(url.lastPathComponent) could not be opened: \(reason).")
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}
