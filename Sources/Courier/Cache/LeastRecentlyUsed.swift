/// Which entries a store bounded in bytes drops to get back within its limit.
enum LeastRecentlyUsed {
    /// The keys to drop, least recently used first, so that `excess` bytes or more go; never
    /// `kept` (the entry just stored). Usually one goes: the oldest, found in one pass. When
    /// more must, one sort.
    /// - Parameters:
    ///   - entries: The store's entries.
    ///   - excess: How many bytes the store is over its limit; nothing goes when it is not.
    ///   - kept: The key that stays.
    ///   - size: An entry's size in bytes.
    ///   - lastUse: When an entry was last used, by the store's count of uses.
    /// - Returns: The keys, in the order they go.
    static func victims<Value>(
        of entries: [CacheKey: Value], excess: Int, keeping kept: CacheKey, size: (Value) -> Int,
        lastUse: (Value) -> UInt64
    ) -> [CacheKey] {
        guard excess > 0 else { return [] }
        if let oldest = entries.min(by: { lastUse($0.value) < lastUse($1.value) }), oldest.key != kept,
            size(oldest.value) >= excess
        {
            return [oldest.key]
        }
        var victims: [CacheKey] = []
        var excess = excess
        for (key, value) in entries.sorted(by: { lastUse($0.value) < lastUse($1.value) })
        where excess > 0 && key != kept {
            victims.append(key)
            excess -= size(value)
        }
        return victims
    }
}
