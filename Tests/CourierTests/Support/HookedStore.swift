import Courier

/// A memory store with a hook on reads, one on writes and one on purges, for a test whose store
/// must be slow at one point, hand back what a broken or hostile store would, or tell each write.
struct HookedStore: CacheStore {
    let inner = MemoryCacheStore()
    /// What a read gives, from what the memory store holds.
    var read: @Sendable (CachedResponse?) async -> CachedResponse? = { $0 }
    /// Runs for each write with the entry and the write itself, which it calls or not.
    var write: @Sendable (CachedResponse, _ store: @Sendable () async -> Void) async -> Void = { await $1() }
    /// Runs before every purge.
    var purge: @Sendable () async -> Void = {}

    func response(for key: CacheKey) async -> CachedResponse? { await read(await inner.response(for: key)) }
    func store(_ response: CachedResponse, for key: CacheKey) async {
        await write(response) { [inner] in await inner.store(response, for: key) }
    }
    func removeResponse(for key: CacheKey) async { await inner.removeResponse(for: key) }
    func removeResponses(forResourceOf key: CacheKey) async { await inner.removeResponses(forResourceOf: key) }
    func removeAll() async {
        await purge()
        await inner.removeAll()
    }
}
