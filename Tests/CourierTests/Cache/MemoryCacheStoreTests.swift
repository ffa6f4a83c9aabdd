import Courier
import Foundation
import Testing

/// The memory store's bound: the least recently used entries go first, and nothing past the
/// limit stays.
@Suite struct MemoryCacheStoreTests {
    /// An entry the store counts as `bytes`: its body and what every entry counts for itself.
    private func entry(_ bytes: Int) -> CachedResponse {
        let body = Data(repeating: 7, count: bytes - MemoryCacheStore.bytesPerEntry)
        return CachedResponse(HTTPResponse(status: 200, body: body), storedAt: Date())
    }

    private func key(_ name: String) -> CacheKey { CacheKey(resource: Array(name.utf8), variant: Array(name.utf8)) }

    @Test("past its limit, the least recently used entries are removed first")
    func leastRecentlyUsedGoesFirst() async {
        let store = MemoryCacheStore(limit: 3_000)
        await store.store(entry(1_000), for: key("a"))
        await store.store(entry(1_000), for: key("b"))
        await store.store(entry(1_000), for: key("c"))
        _ = await store.response(for: key("a"))  // a is now the most recently used

        await store.store(entry(1_000), for: key("d"))

        #expect(await store.response(for: key("b")) == nil)
        #expect(await store.response(for: key("a")) != nil)
        #expect(await store.response(for: key("c")) != nil)
        #expect(await store.response(for: key("d")) != nil)
        #expect(store.byteCount <= 3_000 && store.count == 3)
    }

    @Test("an entry larger than the whole limit is not stored, and replaces nothing but its own key")
    func oversizedEntry() async {
        let store = MemoryCacheStore(limit: 1_000)
        await store.store(entry(500), for: key("a"))
        await store.store(entry(500), for: key("b"))

        await store.store(entry(2_000), for: key("b"))

        #expect(await store.response(for: key("a")) != nil)
        #expect(await store.response(for: key("b")) == nil)
        #expect(store.byteCount == 500)
    }

    @Test("replacing an entry counts its bytes once")
    func replacing() async {
        let store = MemoryCacheStore(limit: 10_000)
        for size in [4_000, 1_000, 3_000] { await store.store(entry(size), for: key("a")) }
        #expect(store.count == 1 && store.byteCount == 3_000)
        await store.removeResponse(for: key("a"))
        #expect(store.count == 0 && store.byteCount == 0)
    }

    @Test("empty answers count too: a thousand of them do not all stay in a small store")
    func emptyEntriesAreBounded() async {
        let store = MemoryCacheStore(limit: 10_000)
        for index in 0..<1_000 {
            await store.store(CachedResponse(HTTPResponse(status: 204), storedAt: Date()), for: key("e\(index)"))
        }
        #expect(store.count == 10_000 / MemoryCacheStore.bytesPerEntry)
        #expect(await store.response(for: key("e999")) != nil)
        #expect(await store.response(for: key("e0")) == nil)
    }

    @Test("many tasks at once keep the count and the bound right")
    func concurrent() async {
        let store = MemoryCacheStore(limit: 50_000)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    await store.store(entry(1_000), for: key("k\(index % 80)"))
                    _ = await store.response(for: key("k\((index * 7) % 80)"))
                }
            }
        }
        #expect(store.byteCount <= 50_000)
        #expect(store.byteCount == store.count * 1_000)
    }
}
