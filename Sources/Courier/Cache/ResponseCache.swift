import Foundation

/// The client's cache of answers, for endpoints whose ``CachePolicy`` asks for it.
///
/// It sits outside every interceptor: an answer is stored and found by the request as its
/// endpoint describes it (method, URL, query, a digest of the body, the headers a `Vary`
/// names), before the token, the common parameters and the signature are added. A signed
/// request, whose timestamp and nonce differ every time, can still be answered from it.
///
/// Every key also holds the session's identity, which `identity` gives (the signed-in user's
/// ID, say), so one user's answers are never given to another. When `identity` throws, the
/// request goes to the network and nothing is stored.
///
/// ```swift
/// var configuration = NetworkClient.Configuration(baseURL: URL(string: "https://api.example.com/v1/")!)
/// configuration.cache = ResponseCache(store: MemoryCacheStore()) { await account.userID }
/// ```
///
/// The whole cache is emptied when a request fails with ``NetworkError/Code/sessionExpired``;
/// call ``removeAll()`` on logout. Only answers that decoded into their endpoint's type are
/// stored (for an envelope, a business success), and none that says `Cache-Control: no-store`
/// or `Vary: *`.
public struct ResponseCache: Sendable {
    /// Where the answers are kept.
    public let store: any CacheStore
    private let identity: @Sendable () async throws -> String?
    /// The clock entries are stored and aged by.
    let now: @Sendable () -> Date

    /// Creates a cache.
    /// - Parameters:
    ///   - store: Where the answers are kept; a ``MemoryCacheStore`` of 10 MiB by default.
    ///   - identity: Who the session belongs to (the signed-in user's ID), or `nil` before
    ///     anyone signs in. Asked for on every request that uses the cache.
    public init(
        store: any CacheStore = MemoryCacheStore(), identity: @escaping @Sendable () async throws -> String?
    ) {
        self.init(store: store, identity: identity, now: Date.init)
    }

    package init(
        store: any CacheStore, identity: @escaping @Sendable () async throws -> String?,
        now: @escaping @Sendable () -> Date
    ) {
        self.store = store
        self.identity = identity
        self.now = now
    }

    /// Removes every stored answer: on logout, say.
    public func removeAll() async {
        try? await store.removeAll()
    }

    // MARK: - Keys and entries

    /// The key of `request` in this session, or `nil` when it cannot be cached: a download, a
    /// multipart or file body, or an identity that could not be read.
    func key(for request: HTTPRequest) async -> CacheKey? {
        guard let parts = RequestDigest.parts(of: request) else { return nil }
        let session: String?
        do { session = try await identity() } catch { return nil }
        let owner = session.map { "user " + $0 } ?? "nobody"
        return RequestDigest.key("courier-cache-1", [owner] + parts)
    }

    /// The entry under `key`, if it answers `request` (the headers its `Vary` named have the
    /// same values).
    func response(for key: CacheKey, answering request: HTTPRequest) async -> CachedResponse? {
        guard let stored = try? await store.response(for: key) else { return nil }
        for (name, value) in stored.varyingHeaders where (request.headers[name] ?? "") != value {
            return nil
        }
        return stored
    }

    /// Stores the answer to `request` under `key`, unless it may not be stored.
    func save(_ response: HTTPResponse, answering request: HTTPRequest, under key: CacheKey) async {
        guard (200..<300).contains(response.status), response.bodyFile == nil else { return }
        let control = (response.headers["Cache-Control"] ?? "").lowercased()
        if control.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "no-store" }) {
            return
        }
        var varying: [String: String] = [:]
        for name in (response.headers["Vary"] ?? "").split(separator: ",") {
            let name = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard name != "*" else { return }
            if !name.isEmpty { varying[name] = request.headers[name] ?? "" }
        }
        try? await store.store(CachedResponse(response, storedAt: now(), varyingHeaders: varying), for: key)
    }

    /// Whether an entry stored at `storedAt` is younger than `maxAge` now. One stored in the
    /// future (the clock was set back) is not.
    func isFresh(_ stored: CachedResponse, maxAge: Duration) -> Bool {
        let age = now().timeIntervalSince(stored.storedAt)
        return age >= 0 && Duration.seconds(age) < maxAge
    }
}
