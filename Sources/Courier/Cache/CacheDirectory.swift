import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory of a ``DiskCacheStore``, held open: every file is found, read, written, renamed
/// and removed relative to this descriptor (`openat`, `renameat`, `unlinkat`, `fstatat`), never
/// by path. A directory swapped for a symbolic link, or moved, after the store opened it changes
/// nothing: the store keeps working in the directory it checked. Only plain files of this user
/// are entries; one that belongs to another user, or is a link or a pipe, is never read.
///
/// `@unchecked Sendable`: `descriptor` is set once, and the calls on it are safe from any
/// thread.
final class CacheDirectory: @unchecked Sendable {
    private let descriptor: Int32

    /// Makes `url` (0700) if it is missing and opens it, checking that it is a directory of this
    /// user's, not a symbolic link; one that others may read is made 0700.
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be made or opened, or is not such
    ///   a directory.
    init(_ url: URL) throws(NetworkError) {
        let path = url.path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: nil)
        } catch {
            throw NetworkError(.fileSystem, "The cache directory could not be made.", underlying: error)
        }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0, Self.kind(info) == mode_t(S_IFDIR),
            info.st_uid == geteuid()
        else {
            if descriptor >= 0 { close(descriptor) }
            throw NetworkError(.fileSystem, "The cache directory is not a directory of this user's.")
        }
        if info.st_mode & 0o077 != 0, fchmod(descriptor, 0o700) != 0 {
            close(descriptor)
            throw NetworkError(.fileSystem, "The cache directory could not be made private.")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The names in the directory.
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be read.
    func names() throws(NetworkError) -> [String] {
        // A descriptor of its own: reading moves its offset, and closedir closes it.
        let own = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard own >= 0, let stream = fdopendir(own) else {
            if own >= 0 { close(own) }
            throw NetworkError(
                .fileSystem, "The cache directory could not be read: \(String(cString: strerror(errno))).")
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `name` is now, not following a link; `nil` when there is nothing.
    func info(of name: String) -> stat? {
        var info = stat()
        return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    /// Whether `info` is a plain file of this user's: the only kind of file that is an entry.
    static func isOwnPlainFile(_ info: stat) -> Bool {
        kind(info) == mode_t(S_IFREG) && info.st_uid == geteuid()
    }

    /// Opens `name` for reading, never through a link and never blocking on a special file; the
    /// descriptor, or `nil`.
    func openForReading(_ name: String) -> Int32? {
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        return file >= 0 ? file : nil
    }

    /// Creates `name` for writing, readable by this user alone (0600), replacing nothing.
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be created.
    func create(_ name: String) throws(NetworkError) -> FileHandle {
        let file = openat(descriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            throw NetworkError(.fileSystem, "A cache entry could not be created: \(String(cString: strerror(errno))).")
        }
        return FileHandle(fileDescriptor: file, closeOnDealloc: true)
    }

    /// Renames `name` to `newName`, replacing what is there; the reason when it fails.
    func rename(_ name: String, to newName: String) -> String? {
        renameat(descriptor, name, descriptor, newName) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Removes `name`, if it is there and not a directory.
    func remove(_ name: String) {
        _ = unlinkat(descriptor, name, 0)
    }

    /// The type bits of a file's mode.
    static func kind(_ info: stat) -> mode_t { info.st_mode & mode_t(S_IFMT) }
}
