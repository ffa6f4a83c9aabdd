import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``CacheStore`` in one directory, bounded in bytes, that survives a relaunch.
///
/// Each entry is a file of its own, readable by this user alone (0600), written to a new file
/// first and renamed into place when complete: a process killed while writing leaves no entry
/// half-written, and the next store removes what it left. An entry that cannot be read whole
/// (cut off, written by another version, its checksum wrong, not a plain file) is a miss, and is
/// removed. When entries would take more than the limit, the least recently used go first.
///
/// ```swift
/// let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
/// let store = try DiskCacheStore(directory: caches.appendingPathComponent("api-answers"))
/// configuration.cache = ResponseCache(store: store)
/// ```
///
/// Give the store a directory of its own, and open one store per directory in a process: two
/// stores on one directory each keep their own count of its bytes. A rename makes an entry
/// whole or absent, not durable: after a power cut an entry may be gone, never half there.
///
/// `@unchecked Sendable`: `index`, `total`, `clock` and `generation` are guarded by `lock`, and
/// so is every rename and removal of an entry file.
public final class DiskCacheStore: CacheStore, @unchecked Sendable {
    /// The directory of the entries.
    public let directory: URL
    /// The most bytes the entry files may take together.
    public let limit: Int

    private let lock = NSLock()
    private var index: [CacheKey: (bytes: Int, lastUse: UInt64)] = [:]
    private var total = 0
    private var clock: UInt64 = 0
    /// Counts ``removeAll()`` calls, so a write that began before one does not land after it.
    private var generation = 0

    /// Opens the store in `directory`, creating it (0700) if needed, and removes what an earlier
    /// process left half-written.
    /// - Parameters:
    ///   - directory: The store's own directory, owned by this user.
    ///   - limit: The most bytes the entries may take together; 50 MiB by default.
    /// - Throws: ``NetworkError/Code/fileSystem`` when the directory cannot be made or read, is a
    ///   symbolic link, or belongs to another user.
    public init(directory: URL, limit: Int = 50 << 20) throws(NetworkError) {
        self.directory = directory
        self.limit = max(0, limit)
        try Self.prepare(directory)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw NetworkError(.fileSystem, "The cache directory could not be read.", underlying: error)
        }
        var found: [(key: CacheKey, bytes: Int, modified: Double, name: String)] = []
        for name in names {
            let path = directory.appendingPathComponent(name).path
            if Self.isPartialName(name) {
                _ = unlink(path)
                continue
            }
            guard let key = Self.key(ofEntryNamed: name) else { continue }
            var info = stat()
            // Only a plain file no larger than the limit can be an entry this store wrote.
            guard lstat(path, &info) == 0, Self.kind(info) == Self.plainFile,
                let bytes = Self.size(info, within: self.limit)
            else {
                _ = unlink(path)
                continue
            }
            found.append((key, bytes, Self.modified(info), name))
        }
        // By the time of their last use (a read touches the file), oldest first.
        found.sort { ($0.modified, $0.name) < ($1.modified, $1.name) }
        for entry in found {
            clock += 1
            index[entry.key] = (entry.bytes, clock)
            total += entry.bytes
        }
        // The oldest go while the entries are past the limit (a smaller one than last time).
        for entry in found where total > limit {
            forget(entry.key)
            _ = unlink(directory.appendingPathComponent(entry.name).path)
        }
    }

    /// The number of entries.
    public var count: Int { lock.withLock { index.count } }

    /// The bytes the entry files take together.
    public var byteCount: Int { lock.withLock { total } }

    /// The entry under `key`, or `nil` when there is none or it cannot be read whole (then its
    /// file is removed).
    /// - Parameter key: The key.
    /// - Returns: The entry.
    public func response(for key: CacheKey) async -> CachedResponse? {
        switch Self.read(file(key), limit: limit) {
        case .missing:
            // Unless another task renamed a new one in since.
            lock.withLock { if Self.identity(of: file(key)) == nil { forget(key) } }
            return nil
        case .unreadable(let identity):
            removeIfStill(identity, key)
            return nil
        case .read(let data, let identity):
            guard let response = EntryFormat.decode(data) else {
                removeIfStill(identity, key)
                return nil
            }
            let bytes = data.count
            lock.withLock {
                clock += 1
                if let entry = index[key] {
                    index[key] = (entry.bytes, clock)
                } else if Self.identity(of: file(key)) == identity {
                    // An entry another store wrote, still there: counted from now on.
                    index[key] = (bytes, clock)
                    total += bytes
                }
            }
            return response
        }
    }

    /// Writes an entry: to a new file, then renamed onto the key's; then the least recently used
    /// entries go while the store is over its limit. An entry larger than the limit is not
    /// stored (and the key's old one goes).
    /// - Parameters:
    ///   - response: The entry.
    ///   - key: The key.
    /// - Throws: ``NetworkError/Code/fileSystem`` when it cannot be written.
    public func store(_ response: CachedResponse, for key: CacheKey) async throws(NetworkError) {
        guard let data = EntryFormat.encode(response) else {
            throw NetworkError(.fileSystem, "A cache entry with a date that is not a number cannot be written.")
        }
        guard data.count <= limit else {
            await removeResponse(for: key)
            return
        }
        let started = lock.withLock { generation }
        let partial = directory.appendingPathComponent("\(key.rawValue).\(UUID().uuidString)\(Self.partialSuffix)")
        do {
            try write(data, to: partial)
        } catch let error as NetworkError {
            throw error
        } catch {
            throw NetworkError(.fileSystem, "A cache entry could not be written.", underlying: error)
        }
        let failure: String? = lock.withLock {
            guard generation == started else {
                // Everything was removed while this entry was written: it goes too.
                _ = unlink(partial.path)
                return nil
            }
            guard rename(partial.path, file(key).path) == 0 else {
                let reason = String(cString: strerror(errno))
                _ = unlink(partial.path)
                return reason
            }
            forget(key)
            clock += 1
            index[key] = (data.count, clock)
            total += data.count
            for old in evict(keeping: key) { _ = unlink(file(old).path) }
            return nil
        }
        if let failure { throw NetworkError(.fileSystem, "A cache entry could not be put in place: \(failure).") }
    }

    /// Removes the entry under `key`.
    /// - Parameter key: The key.
    public func removeResponse(for key: CacheKey) async {
        lock.withLock {
            _ = unlink(file(key).path)
            forget(key)
        }
    }

    /// Removes every entry; an entry still being written when this is called is not stored.
    /// - Throws: ``NetworkError/Code/fileSystem`` when the directory cannot be read.
    public func removeAll() async throws(NetworkError) {
        let failure: (any Error)? = lock.withLock {
            generation += 1
            index.removeAll()
            total = 0
            do {
                for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
                where Self.key(ofEntryNamed: name) != nil {
                    _ = unlink(directory.appendingPathComponent(name).path)
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            throw NetworkError(.fileSystem, "The cache directory could not be read.", underlying: failure)
        }
    }

    // MARK: - Files

    private static let entrySuffix = ".entry"
    private static let partialSuffix = ".partial"

    private func file(_ key: CacheKey) -> URL { directory.appendingPathComponent(key.rawValue + Self.entrySuffix) }

    /// The key of a file named `<64 hex>.entry`, or `nil`.
    private static func key(ofEntryNamed name: String) -> CacheKey? {
        guard name.hasSuffix(entrySuffix) else { return nil }
        return CacheKey(rawValue: String(name.dropLast(entrySuffix.utf8.count)))
    }

    /// Whether `name` is `<64 hex>.<UUID>.partial`, a write this store began.
    private static func isPartialName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[2] == "partial" && CacheKey(rawValue: String(parts[0])) != nil
            && UUID(uuidString: String(parts[1])) != nil
    }

    /// Removes the key's file if it is still the one that was read (another task may have
    /// renamed a new one in since), and drops the key from the index.
    private func removeIfStill(_ identity: FileIdentity, _ key: CacheKey) {
        lock.withLock {
            switch Self.identity(of: file(key)) {
            case identity:
                _ = unlink(file(key).path)
                forget(key)
            case nil: forget(key)
            default: break  // a new entry, indexed by the task that wrote it
            }
        }
    }

    /// Which file `url` names now, or `nil` when there is none.
    private static func identity(of url: URL) -> FileIdentity? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? FileIdentity(info) : nil
    }

    private static let plainFile = mode_t(S_IFREG)

    /// The type bits of a file's mode.
    private static func kind(_ info: stat) -> mode_t { info.st_mode & mode_t(S_IFMT) }

    /// When a file was last modified, in seconds since 1970.
    private static func modified(_ info: stat) -> Double {
        #if canImport(Darwin)
            Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
            Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
    }

    /// Drops `key` from the index. Called with `lock` held.
    private func forget(_ key: CacheKey) {
        if let old = index.removeValue(forKey: key) { total -= old.bytes }
    }

    /// Drops the least recently used entries (never `kept`) until the store is within its
    /// limit, and returns their keys for their files to be removed. Called with `lock` held.
    private func evict(keeping kept: CacheKey) -> [CacheKey] {
        let victims = LeastRecentlyUsed.victims(
            of: index, excess: total - limit, keeping: kept, size: { $0.bytes }, lastUse: { $0.lastUse })
        for key in victims { forget(key) }
        return victims
    }

    /// Writes `data` to a new file at `url` (0600, never through a link); makes the directory
    /// again if it was removed meanwhile. It is not flushed to the disk: the wait would hold one
    /// of the few threads async code runs on, and a file that a power cut spoils fails its
    /// digest and is a miss, which a cache may have.
    private func write(_ data: Data, to url: URL) throws {
        let handle: FileHandle
        do {
            handle = try PrivateFile.create(at: url)
        } catch {
            guard access(directory.path, F_OK) != 0 else { throw error }
            try Self.prepare(directory)
            handle = try PrivateFile.create(at: url)
        }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: data)
        } catch {
            _ = unlink(url.path)
            throw error
        }
    }

    /// Makes `directory` (0700) if it is missing, and checks that it is a directory of this
    /// user's, not a symbolic link; one that others may read is made 0700.
    private static func prepare(_ directory: URL) throws(NetworkError) {
        let path = directory.path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: nil)
        } catch {
            throw NetworkError(.fileSystem, "The cache directory could not be made.", underlying: error)
        }
        var info = stat()
        guard lstat(path, &info) == 0, kind(info) == mode_t(S_IFDIR), info.st_uid == geteuid() else {
            throw NetworkError(.fileSystem, "The cache directory is not a directory of this user's.")
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw NetworkError(.fileSystem, "The cache directory could not be made private.")
        }
    }

    /// What reading an entry file found.
    private enum ReadResult {
        case missing
        /// Not a plain file, or larger than the limit; the file's identity, to remove only it.
        case unreadable(FileIdentity)
        case read(Data, FileIdentity)
    }

    /// Which file a name held when it was read.
    private struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64
        init(_ info: stat) {
            // dev_t is signed on some systems: its bits, whatever they are.
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
        }
    }

    /// A file's size, or `nil` when it is larger than `limit` (in 64 bits: a file past 2 GiB
    /// where `Int` has 32 is only too large).
    private static func size(_ info: stat, within limit: Int) -> Int? {
        let size = Int64(info.st_size)
        return size >= 0 && size <= Int64(limit) ? Int(size) : nil
    }

    /// The bytes of an entry file, never through a symbolic link, never blocking on a special
    /// file, and never more than `limit`; a read also marks the file as used now.
    private static func read(_ url: URL, limit: Int) -> ReadResult {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            var info = stat()
            // A symbolic link (or anything else there that will not open) is not an entry.
            return lstat(url.path, &info) == 0 ? .unreadable(FileIdentity(info)) : .missing
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .missing }
        guard kind(info) == plainFile, let size = size(info, within: limit),
            let data = try? handle.readToEnd() ?? Data(), data.count == size
        else { return .unreadable(FileIdentity(info)) }
        _ = futimens(descriptor, nil)
        return .read(data, FileIdentity(info))
    }
}
