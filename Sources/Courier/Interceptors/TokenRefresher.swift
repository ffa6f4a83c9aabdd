import Foundation

/// Fetches credentials one at a time for all callers (single flight), within a budget.
///
/// - A caller that failed with credential *c* asks for one newer than *c*: if the store already
///   holds another one (someone refreshed meanwhile) that is not about to expire, it gets that
///   one without a refresh. A stored credential that expires within the leeway is refreshed
///   before it is used.
/// - While a refresh runs, every other caller waits for it and gets its result; a failed refresh
///   fails each of them once. A caller whose task is cancelled stops waiting at once, with
///   ``NetworkError/Code/cancelled``; the refresh goes on for the others.
/// - A refresh stores its credential only if the store still holds the one it replaced
///   (``TokenStore/replaceCredential(_:with:)``). When the app logged out meanwhile, the
///   refresh's credential is dropped and its waiters fail with
///   ``NetworkError/Code/tokenRefreshFailed``; when the app logged in again meanwhile, they get
///   the new login's credential.
/// - A store that throws fails the request with ``NetworkError/Code/tokenRefreshFailed``; a
///   refresh whose store write fails is not tried again (the fetch may have used up a one-time
///   refresh token).
/// - Each refresh tries the fetch up to `attempts` times with `backoff` between tries (the seeds
///   wait 0.5 s), sleeping without blocking a thread.
/// - At most `limit` refreshes start per `window`; beyond that callers fail at once with
///   ``NetworkError/Code/tokenRefreshFailed`` instead of hammering the token endpoint.
actor TokenRefresher {
    typealias Fetch = @Sendable (TokenRefresh) async throws -> Credential

    private let store: any TokenStore
    private let fetch: Fetch
    private let attempts: Int
    private let backoff: Duration
    private let limit: Int
    private let window: Duration
    private let leeway: Duration
    private var inFlight: SharedOutcome<Credential>?
    private var starts: [ContinuousClock.Instant] = []
    private(set) var refreshCount = 0

    init(
        store: any TokenStore, fetch: @escaping Fetch, attempts: Int, backoff: Duration, limit: Int, window: Duration,
        leeway: Duration
    ) {
        self.store = store
        self.fetch = fetch
        self.attempts = max(attempts, 1)
        self.backoff = backoff
        self.limit = max(limit, 1)
        self.window = window
        self.leeway = leeway
    }

    /// The stored credential, fetched first when there is none or it is about to expire.
    func currentCredential(client: ClientHandle) async throws(NetworkError) -> Credential {
        if let stored = try await Self.read(store), !isExpiring(stored) { return stored }
        return try await credential(newerThan: nil, client: client)
    }

    /// A credential other than `stale` that is not about to expire: the stored one if it is
    /// such, else the result of a refresh (joining one that is already running).
    func credential(newerThan stale: Credential?, client: ClientHandle) async throws(NetworkError) -> Credential {
        if let inFlight { return try await Self.wait(for: inFlight) }
        let stored = try await Self.read(store)
        // The actor may have started a refresh while this call waited for the store.
        if let inFlight { return try await Self.wait(for: inFlight) }
        if let stored, stored != stale, !isExpiring(stored) { return stored }
        // What the refresh replaces: what the store holds, or (after a logout, when it holds
        // nothing) the credential the caller used, so that the refresh cannot store over the
        // logout.
        let replaced = stored ?? stale
        // From here to `inFlight = shared` nothing suspends, so only one caller starts a refresh.
        let now = ContinuousClock.now
        starts.removeAll { now - $0 > window }
        guard starts.count < limit else {
            throw NetworkError(
                .tokenRefreshFailed, "The token was refreshed \(limit) times within \(window); not trying again yet.")
        }
        starts.append(now)
        refreshCount += 1
        let shared = SharedOutcome<Credential>()
        inFlight = shared
        let refresh = TokenRefresh(previous: replaced, client: client)
        // A task of its own: the refresh outlives any one caller's cancellation.
        Task { [store, fetch, attempts, backoff] in
            let outcome = await Self.refresh(refresh, store: store, fetch: fetch, attempts: attempts, backoff: backoff)
            self.finished(shared)
            shared.finish(outcome)
        }
        return try await Self.wait(for: shared)
    }

    private func isExpiring(_ credential: Credential) -> Bool {
        credential.expires(within: leeway, from: Date())
    }

    private func finished(_ shared: SharedOutcome<Credential>) {
        if inFlight === shared { inFlight = nil }
    }

    private static func wait(for shared: SharedOutcome<Credential>) async throws(NetworkError) -> Credential {
        do {
            return try await shared.value(whileWaitingFor: "a new token")
        } catch {
            throw NetworkError.wrapping(error)
        }
    }

    private static func read(_ store: any TokenStore) async throws(NetworkError) -> Credential? {
        do {
            return try await store.credential()
        } catch {
            throw NetworkError(.tokenRefreshFailed, "Reading the stored credential failed.", underlying: error)
        }
    }

    /// Fetches a credential (with retries) and stores it in place of the previous one.
    private static func refresh(
        _ refresh: TokenRefresh, store: any TokenStore, fetch: Fetch, attempts: Int, backoff: Duration
    ) async -> Result<Credential, any Error> {
        var lastError: (any Error)?
        for attempt in 1...attempts {
            let credential: Credential
            do {
                credential = try await fetch(refresh)
            } catch {
                lastError = error
                if attempt < attempts { try? await Task.sleep(for: backoff) }
                continue
            }
            do {
                if try await store.replaceCredential(refresh.previous, with: credential) { return .success(credential) }
                // The app changed the session meanwhile: its choice wins.
                if let current = try await store.credential(), current != refresh.previous { return .success(current) }
                return .failure(
                    NetworkError(.tokenRefreshFailed, "The session ended while the token was being refreshed."))
            } catch {
                return .failure(
                    NetworkError(.tokenRefreshFailed, "Storing the refreshed credential failed.", underlying: error))
            }
        }
        if let error = lastError as? NetworkError, error.code == .tokenRefreshFailed { return .failure(error) }
        return .failure(
            NetworkError(.tokenRefreshFailed, "Fetching the token failed \(attempts) times.", underlying: lastError))
    }
}

/// What a token fetch gets: the credential it replaces and a client to send the fetch with.
public struct TokenRefresh: Sendable {
    /// The credential being replaced, with its refresh token; `nil` on the first fetch.
    public let previous: Credential?
    /// The client the layer belongs to, skipping the token layer.
    public let client: ClientHandle
}
