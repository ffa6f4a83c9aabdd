import Foundation

/// A ``CacheStore`` in memory, bounded in bytes: when an entry would take it past its limit, the
/// least recently used entries go first. An entry larger than the whole limit is not stored.
/// Each entry counts its ``CachedResponse/byteCount`` and 256 bytes more for itself and its key,
/// so many empty answers fill it too.
///
/// ```swift
/// configuration.cache = ResponseCache(store: MemoryCacheStore(limit: 20 << 20))
/// ```
///
/// `@unchecked Sendable`: `entries`, `total` and `clock` are guarded by `lock`.
public final class MemoryCacheStore: CacheStore, @unchecked Sendable {
    /// The most bytes the entries may take together.
    public let limit: Int

    /// What each entry counts for itself and its key, besides its answer's bytes.
    package static let bytesPerEntry = 256

    private let lock = NSLock()
    private var entries: [CacheKey: (response: CachedResponse, lastUse: UInt64)] = [:]
    private var total = 0
    private var clock: UInt64 = 0

    /// Creates an empty store.
    /// - Parameter limit: The most bytes its entries may take together; 10 MiB by default.
    public init(limit: Int = 10 << 20) {
        self.limit = max(0, limit)
    }

    /// The number of entries.
    public var count: Int { lock.withLock { entries.count } }

    /// The bytes the entries count for together: their answers' and 256 for each.
    public var byteCount: Int { lock.withLock { total } }

    /// The keys of the entries, for tests.
    package var keys: [CacheKey] { lock.withLock { Array(entries.keys) } }

    /// The entry under `key`, which becomes the most recently used.
    /// - Parameter key: The key.
    /// - Returns: The entry, or `nil`.
    public func response(for key: CacheKey) async -> CachedResponse? {
        lock.withLock {
            guard let entry = entries[key] else { return nil }
            clock += 1
            entries[key] = (entry.response, clock)
            return entry.response
        }
    }

    /// Stores an entry, removing the least recently used ones while the store is over its limit.
    /// - Parameters:
    ///   - response: The entry.
    ///   - key: The key.
    public func store(_ response: CachedResponse, for key: CacheKey) async {
        let size = Self.size(of: response)
        lock.withLock {
            if let old = entries.removeValue(forKey: key) { total -= Self.size(of: old.response) }
            guard size <= limit else { return }
            clock += 1
            entries[key] = (response, clock)
            total += size
            let victims = LeastRecentlyUsed.victims(
                of: entries, excess: total - limit, keeping: key, size: { Self.size(of: $0.response) },
                lastUse: { $0.lastUse })
            for victim in victims {
                if let old = entries.removeValue(forKey: victim) { total -= Self.size(of: old.response) }
            }
        }
    }

    /// Removes the entry under `key`.
    /// - Parameter key: The key.
    public func removeResponse(for key: CacheKey) async {
        lock.withLock {
            if let old = entries.removeValue(forKey: key) { total -= Self.size(of: old.response) }
        }
    }

    /// Removes every entry of `key`'s resource.
    /// - Parameter key: A key of the resource.
    public func removeResponses(forResourceOf key: CacheKey) async {
        let resource = key.resource
        lock.withLock {
            for other in entries.keys where other.resource == resource {
                if let old = entries.removeValue(forKey: other) { total -= Self.size(of: old.response) }
            }
        }
    }

    /// Removes every entry.
    public func removeAll() async {
        lock.withLock {
            entries.removeAll()
            total = 0
        }
    }

    /// The bytes an entry counts for.
    private static func size(of response: CachedResponse) -> Int { response.byteCount + bytesPerEntry }
}
