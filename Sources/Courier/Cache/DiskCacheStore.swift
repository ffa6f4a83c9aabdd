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
/// (cut off, written by another version, its checksum wrong, not a plain file, another user's)
/// is a miss, and is removed. When entries would take more than the limit, the least recently
/// used go first.
///
/// The store holds its directory open from the moment it is made, and reaches every file
/// through it: a directory moved, or swapped for a symbolic link, afterwards does not make it
/// read or write anywhere else.
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
/// `@unchecked Sendable`: `index`, `total`, `clock` and `purges` are guarded by `lock`, and so
/// is every rename and removal of an entry file.
public final class DiskCacheStore: CacheStore, @unchecked Sendable {
    /// The directory of the entries, as it was named when the store was made.
    public let directory: URL
    /// The most bytes the entry files may take together.
    public let limit: Int

    private let folder: CacheDirectory
    private let lock = NSLock()
    private var index: [CacheKey: (bytes: Int, lastUse: UInt64)] = [:]
    private var total = 0
    private var clock: UInt64 = 0
    /// Counts ``removeAll()`` calls, so a write that began before one does not land after it.
    private var purges = 0

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
        folder = try CacheDirectory(directory)
        var found: [(key: CacheKey, bytes: Int, modified: Double, name: String)] = []
        for name in try folder.names() {
            if Self.isPartialName(name) {
                folder.remove(name)
                continue
            }
            guard let key = Self.key(ofEntryNamed: name) else { continue }
            // Only a plain file of this user's no larger than the limit can be an entry this
            // store wrote.
            guard let info = folder.info(of: name), CacheDirectory.isOwnPlainFile(info),
                let bytes = Self.size(info, within: self.limit)
            else {
                folder.remove(name)
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
            folder.remove(entry.name)
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
        switch read(entryName(key)) {
        case .missing:
            // Unless another task renamed a new one in since.
            lock.withLock { if identity(of: entryName(key)) == nil { forget(key) } }
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
                } else if self.identity(of: entryName(key)) == identity {
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
        let started = lock.withLock { purges }
        let partial = "\(key.rawValue).\(UUID().uuidString)\(Self.partialSuffix)"
        try write(data, to: partial)
        let failure: String? = lock.withLock {
            guard purges == started else {
                // Everything was removed while this entry was written: it goes too.
                folder.remove(partial)
                return nil
            }
            if let reason = folder.rename(partial, to: entryName(key)) {
                folder.remove(partial)
                return reason
            }
            forget(key)
            clock += 1
            index[key] = (data.count, clock)
            total += data.count
            for old in evict(keeping: key) { folder.remove(entryName(old)) }
            return nil
        }
        if let failure { throw NetworkError(.fileSystem, "A cache entry could not be put in place: \(failure).") }
    }

    /// Removes the entry under `key`.
    /// - Parameter key: The key.
    public func removeResponse(for key: CacheKey) async {
        lock.withLock {
            folder.remove(entryName(key))
            forget(key)
        }
    }

    /// Removes every entry of `key`'s resource that this store wrote or found when it opened.
    /// - Parameter key: A key of the resource.
    public func removeResponses(forResourceOf key: CacheKey) async {
        let resource = key.resource
        lock.withLock {
            for other in index.keys where other.resource == resource {
                folder.remove(entryName(other))
                forget(other)
            }
        }
    }

    /// Removes every entry; an entry still being written when this is called is not stored.
    /// - Throws: ``NetworkError/Code/fileSystem`` when the directory cannot be read.
    public func removeAll() async throws(NetworkError) {
        try lock.withLock { () -> Result<Void, NetworkError> in
            purges += 1
            index.removeAll()
            total = 0
            return Result { () throws(NetworkError) in
                for name in try folder.names() where Self.key(ofEntryNamed: name) != nil { folder.remove(name) }
            }
        }.get()
    }

    // MARK: - Files

    private static let entrySuffix = ".entry"
    private static let partialSuffix = ".partial"

    private func entryName(_ key: CacheKey) -> String { key.rawValue + Self.entrySuffix }

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
            switch self.identity(of: entryName(key)) {
            case identity:
                folder.remove(entryName(key))
                forget(key)
            case nil: forget(key)
            default: break  // a new entry, indexed by the task that wrote it
            }
        }
    }

    /// Which file `name` is now, or `nil` when there is none.
    private func identity(of name: String) -> FileIdentity? {
        folder.info(of: name).map(FileIdentity.init)
    }

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

    /// Writes `data` to the new file `name` (0600, never through a link). It is not flushed to
    /// the disk: the wait would hold one of the few threads async code runs on, and a file that
    /// a power cut spoils fails its digest and is a miss, which a cache may have.
    private func write(_ data: Data, to name: String) throws(NetworkError) {
        let handle = try folder.create(name)
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: data)
        } catch {
            folder.remove(name)
            throw NetworkError(.fileSystem, "A cache entry could not be written.", underlying: error)
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
    /// file, never another user's, and never more than `limit`; a read also marks the file as
    /// used now.
    private func read(_ name: String) -> ReadResult {
        guard let descriptor = folder.openForReading(name) else {
            // A symbolic link (or anything else there that will not open) is not an entry.
            return identity(of: name).map(ReadResult.unreadable) ?? .missing
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .missing }
        guard CacheDirectory.isOwnPlainFile(info), let size = Self.size(info, within: limit),
            let data = try? handle.readToEnd() ?? Data(), data.count == size
        else { return .unreadable(FileIdentity(info)) }
        _ = futimens(descriptor, nil)
        return .read(data, FileIdentity(info))
    }
}
