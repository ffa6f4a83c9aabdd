import Foundation

/// The client's cache of answers, for endpoints whose ``CachePolicy`` asks for it.
///
/// It sits outside every interceptor: an answer is stored and found by the request as its
/// endpoint describes it (method, URL, query, a digest of the body, the headers a `Vary`
/// names), before the token, the common parameters and the signature are added. A signed
/// request, whose timestamp and nonce differ every time, can still be answered from it.
///
/// Every answer belongs to the user the client's ``Session`` had signed in when its request
/// began (its ``Credential/userID``), or to nobody: one user's answers are never given to
/// another. An answer is stored only while the session is still in the epoch its request began
/// in, and no purge happened since; nor is it stored over the answer to an identical request
/// that began after it.
///
/// ```swift
/// let client = NetworkClient(configuration: .init(
///     baseURL: URL(string: "https://api.example.com/v1/")!, session: session,
///     cache: ResponseCache(store: MemoryCacheStore())))
/// ```
///
/// A logout (``Session/logOut()``), a login as another user and a session the backend ended
/// empty the whole cache. Only `GET` and `HEAD` answers are stored, and `POST` answers
/// of endpoints marked ``Endpoint/idempotent()`` (a query sent as a `POST`); only answers that
/// decoded into their endpoint's type (for an envelope, a business success), with status 200,
/// 203 or 204; none that says `Cache-Control: no-store` or `Vary: *`, or varies on a header the
/// endpoint does not set itself. `Set-Cookie` is never stored.
public struct ResponseCache: Sendable {
    /// Where the answers are kept.
    public let store: any CacheStore
    /// Counts purges and orders requests, shared by every copy of the cache.
    private let ledger = CacheLedger()
    /// The clock entries are stored and aged by.
    let now: @Sendable () -> Date

    /// Creates a cache.
    /// - Parameter store: Where the answers are kept; a ``MemoryCacheStore`` of 10 MiB by
    ///   default.
    public init(store: any CacheStore = MemoryCacheStore()) {
        self.init(store: store, now: Date.init)
    }

    package init(store: any CacheStore, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.now = now
    }

    /// Removes every stored answer (a ``Session/logOut()`` does it for you). Answers to
    /// requests still in flight are not stored afterwards.
    /// - Throws: What the store throws when it cannot remove them.
    public func removeAll() async throws {
        ledger.purge()
        try await store.removeAll()
    }

    // MARK: - Keys and entries

    /// Where a request's answer is found and stored: its key, the session epoch and purge count
    /// it was made in, and its place among the requests of this cache.
    struct Ticket: Sendable {
        let key: CacheKey
        let epoch: SessionEpoch
        let purge: Int
        let order: UInt64
    }

    /// The ticket of a request of session epoch `epoch`, or `nil` when it cannot be cached: not
    /// a `GET`, a `HEAD` or an idempotent `POST`, a download, a multipart or file body, or an
    /// epoch whose user is not known (the session's store could not be read). `variant` names
    /// what else tells answers apart (the layers the endpoint skips, the type it decodes into).
    func ticket(for request: HTTPRequest, variant: [String], epoch: SessionEpoch) -> Ticket? {
        let method = request.method
        guard method == .get || method == .head || (method == .post && request.isIdempotent),
            let owner = epoch.owner, let parts = RequestDigest.parts(of: request)
        else { return nil }
        let (purge, order) = ledger.begin()
        let headers = request.headers.fields.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
        let key = CacheKey(
            resource: RequestDigest.resource(owner: owner, of: request),
            variant: RequestDigest.digest("courier-cache-2", [owner] + parts + headers + variant))
        return Ticket(key: key, epoch: epoch, purge: purge, order: order)
    }

    /// Removes what a request that changed something made stale (RFC 9111 §4.4): after a
    /// success (2xx or 3xx) of any method but `GET`, `HEAD`, `OPTIONS` and a `POST` the cache
    /// reads with (``Endpoint/idempotent()``), every stored answer of the same user for its URL,
    /// and for the URLs of the same origin its `Location` and `Content-Location` name. An
    /// identical read that began before it stores nothing afterwards. The removal runs in a task
    /// of its own, so a caller cancelled meanwhile does not leave it half done.
    func invalidate(after request: HTTPRequest, answer response: HTTPResponse, epoch: SessionEpoch) async {
        let method = request.method
        guard (200..<400).contains(response.status), method != .get, method != .head, method != .options,
            !(method == .post && request.isIdempotent), let owner = epoch.owner
        else { return }
        var targets = [request]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers[name],
                let url = URL(string: value, relativeTo: request.url)?.absoluteURL,
                url.origin == request.url.origin
            else { continue }
            targets.append(HTTPRequest(method: .get, url: url))
        }
        for target in targets {
            let key = CacheKey(
                resource: RequestDigest.resource(owner: owner, of: target), variant: Array(repeating: 0, count: 16))
            ledger.invalidate(key.resource)
            let store = store
            await Task { try? await store.removeResponses(forResourceOf: key) }.value
        }
    }

    /// A new place among the requests of this cache: for a shared transfer as it starts.
    func nextOrder() -> UInt64 { ledger.begin().order }

    /// The entry of a ticket, if it answers `request` (the headers its `Vary` named have the
    /// same values) and no purge happened since the ticket was made (a read that began before
    /// a purge may still find the file it removes).
    func response(for ticket: Ticket, answering request: HTTPRequest) async -> CachedResponse? {
        guard let stored = try? await store.response(for: ticket.key), ledger.purges == ticket.purge,
            ticket.epoch.isCurrent
        else { return nil }
        for (name, value) in stored.varyingHeaders where (request.headers[name] ?? "") != value {
            return nil
        }
        return stored
    }

    /// Stores the answer to `request` under its ticket, unless it may not be stored (then the
    /// entry there goes), the session left the ticket's epoch, a purge happened since the
    /// request left, another caller of the transfer it shared stores it, or an identical
    /// request that began later stored or removed the entry (a shared answer is as old as its
    /// transfer, not as the caller that stores it). Should one write meanwhile, or the session
    /// leave the epoch, the entry is removed: the two writes may land in either order, and a
    /// miss is better than the older answer.
    /// - Returns: The entry made of the answer (stored or not), or `nil` when it may not be
    ///   stored.
    @discardableResult
    func save(_ response: HTTPResponse, answering request: HTTPRequest, ticket: Ticket) async -> CachedResponse? {
        guard let entry = entry(for: response, answering: request) else {
            await remove(ticket)
            return nil
        }
        guard ledger.purges == ticket.purge, ticket.epoch.isCurrent else { return entry }
        // One caller of a shared transfer stores its answer for all (its callers are of one
        // session epoch), in the order of the transfer.
        if let mark = response.sharedTransfer, !mark.claim(ticket.key) { return entry }
        let order = min(response.sharedTransfer?.order ?? ticket.order, ticket.order)
        guard ledger.claim(ticket.key, order: order) else { return entry }
        if response.sharedTransfer != nil {
            // In a task of its own: the others count on it, so this caller's cancellation does
            // not stop the write.
            await Task { [store] in try? await store.store(entry, for: ticket.key) }.value
        } else {
            try? await store.store(entry, for: ticket.key)
        }
        // A purge or a new epoch that began while the entry was written removes it again, as
        // does a later request's write meanwhile (this one may have landed after it).
        if ledger.purges != ticket.purge || !ticket.epoch.isCurrent || !ledger.isNewest(ticket.key, order: order) {
            // In a task of its own, so a cancelled caller cannot leave the entry in place.
            await Task { [store] in try? await store.removeResponse(for: ticket.key) }.value
        }
        return entry
    }

    /// Removes the entry of a ticket (the server says the resource is gone, or its answer may
    /// not be stored), unless an identical request that began later stored or removed it.
    func remove(_ ticket: Ticket) async {
        guard ledger.claim(ticket.key, order: ticket.order) else { return }
        try? await store.removeResponse(for: ticket.key)
    }

    /// The entry to store for an answer, or `nil` when it may not be stored.
    private func entry(for response: HTTPResponse, answering request: HTTPRequest) -> CachedResponse? {
        guard [200, 203, 204].contains(response.status), response.bodyFile == nil,
            response.headers["Content-Range"] == nil
        else { return nil }
        if HTTPFreshness.directives(in: response.headers).contains(where: { $0.name == "no-store" }) { return nil }
        var varying: [String: String] = [:]
        for name in Self.values(of: "Vary", in: response.headers) {
            // The body is stored decoded, and the session is in the key; any other header must
            // be one the endpoint sets, or this level cannot tell the answers apart.
            if ["accept-encoding", "authorization", "cookie"].contains(name) { continue }
            guard name != "*", let value = request.headers[name] else { return nil }
            varying[name] = value
        }
        var kept = response
        kept.headers = HTTPHeaders(response.headers.fields.filter { $0.name.lowercased() != "set-cookie" })
        return CachedResponse(kept, storedAt: now(), varyingHeaders: varying)
    }

    /// The comma-separated items of every field named `name`, lower-cased and trimmed.
    private static func values(of name: String, in headers: HTTPHeaders) -> [String] {
        headers.fields.filter { $0.name.caseInsensitiveEquals(name) }
            .flatMap { HTTPHeaders.parts(of: $0.value, separatedBy: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// Whether an entry may be used without asking the network, as `policy` says: younger than
    /// its `maxAge`, or (``CachePolicy/http``) than the lifetime its headers give. Never for a
    /// policy that always asks the network, nor for an entry stored in the future (the clock
    /// was set back).
    /// In seconds as `Double`: a date from a store (any number) never overflows a `Duration`.
    func isFresh(_ stored: CachedResponse, for policy: CachePolicy) -> Bool {
        let maxAge: TimeInterval
        switch policy.kind {
        case .cacheFirst(let age), .staleWhileRevalidate(let age):
            maxAge = age.seconds
        case .http:
            maxAge = HTTPFreshness.lifetime(of: stored)
        case .networkOnly, .offlineFallback:
            return false
        }
        let age = now().timeIntervalSince(stored.storedAt)
        return age >= 0 && age < maxAge
    }
}

/// What every copy of a ``ResponseCache`` shares: how many purges happened, so an answer to a
/// request that left before one is not stored after it; for each key, the request that began
/// last of those that stored or removed its entry, so a late answer to a request that began
/// earlier does not replace it; and for each resource a request changed, when, so an answer to
/// a read that began before the change is not stored after it. Requests are ordered by when
/// their ticket was made.
///
/// `@unchecked Sendable`: every property is guarded by `lock`.
private final class CacheLedger: @unchecked Sendable {
    /// Keys remembered at most; past it the older half is forgotten. A request still in flight
    /// while answers for that many other keys were stored may then replace a newer answer, as
    /// it would without the ledger.
    static let remembered = 4_096

    private let lock = NSLock()
    private var purgeCount = 0
    private var issued: UInt64 = 0
    private var newest: [CacheKey: UInt64] = [:]
    /// For each resource a request changed, the last place issued before the change.
    private var changed: [Substring: UInt64] = [:]

    /// The purges so far.
    var purges: Int { lock.withLock { purgeCount } }

    /// Counts a purge: what was known about stored answers is gone with them.
    func purge() {
        lock.withLock {
            purgeCount += 1
            newest = [:]
            changed = [:]
        }
    }

    /// The purges so far and a new request's place among the requests of the cache.
    func begin() -> (purges: Int, order: UInt64) {
        lock.withLock {
            issued += 1
            return (purgeCount, issued)
        }
    }

    /// Whether the request in place `order` may write `key`: no request that began later did.
    /// When it may, it is now the newest for that key.
    func claim(_ key: CacheKey, order: UInt64) -> Bool {
        lock.withLock {
            if let latest = newest[key], latest > order { return false }
            if let change = changed[key.resource], change >= order { return false }
            newest[key] = order
            newest = Self.trimmed(newest)
            return true
        }
    }

    /// Whether the request in place `order` is still the newest to have written `key`, and no
    /// request changed its resource since it began.
    func isNewest(_ key: CacheKey, order: UInt64) -> Bool {
        lock.withLock { (newest[key] ?? order) <= order && (changed[key.resource] ?? 0) < order }
    }

    /// Notes that a request changed `resource` now: the requests that began before it store
    /// nothing for it.
    func invalidate(_ resource: Substring) {
        lock.withLock {
            changed[resource] = issued
            changed = Self.trimmed(changed)
        }
    }

    /// `table` with its older half forgotten once it holds more than ``remembered`` entries.
    private static func trimmed<Key: Hashable>(_ table: [Key: UInt64]) -> [Key: UInt64] {
        guard table.count > remembered else { return table }
        return Dictionary(uniqueKeysWithValues: Array(table.sorted { $0.value > $1.value }.prefix(remembered / 2)))
    }
}
