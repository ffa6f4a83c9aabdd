import Foundation

/// Fetches credentials one at a time for all callers (single flight), within a budget.
///
/// - A caller that failed with credential *c* asks for one newer than *c*: if the store already
///   holds another one (someone refreshed meanwhile) that is not about to expire, it gets that
///   one without a refresh. A stored credential that expires within the leeway is refreshed
///   before it is used; for a credential this refresher fetched, the leeway is at most half its
///   lifetime, and one that arrived already expired is sent as it is for the server to judge,
///   so a short-lived token does not make every request refresh.
/// - Credentials are told apart by their tokens (`sameTokens(as:)`), so a store
///   that keeps the expiry less precisely does not make an old credential look new.
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
/// - Each refresh tries the fetch up to `attempts` times with `backoff` between tries, sleeping
///   without blocking a thread. A fetch that is cancelled (``NetworkClient/cancelAll()``) is not
///   tried again. When a fetch fails but the store now holds another credential (the app logged
///   in meanwhile, for example from the re-login layer inside the fetch), that one is used.
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
    /// Counts finished refreshes: a store read that spans one may have read what it replaced.
    private var generation = 0
    /// The credential the last refresh stored, and when.
    private var issued: (credential: Credential, at: Date)?
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
        self.leeway = max(leeway, .zero)
    }

    /// The stored credential, read at once from a store that allows it (``CredentialSnapshot``),
    /// when it is there and does not expire within the whole leeway; `nil` otherwise, for
    /// ``currentCredential(client:)`` to decide. What it returns is what that would return:
    /// the actor's own check can only shorten the leeway, never lengthen it.
    nonisolated func credentialWithoutWaiting() -> Credential? {
        guard let snapshot = store as? any CredentialSnapshot, let stored = snapshot.credentialNow else { return nil }
        if let expiresAt = stored.expiresAt, expiresAt.timeIntervalSinceNow <= leeway.seconds { return nil }
        return stored
    }

    /// The stored credential, fetched first when there is none or it is about to expire.
    func currentCredential(client: ClientHandle) async throws(NetworkError) -> Credential {
        let stored = try await Self.read(store)
        if let stored, !isExpiring(stored) { return stored }
        // Newer than the expiring one: should the app log out meanwhile, the refresh replaces
        // it, not "nothing", and so cannot store over the logout.
        return try await credential(newerThan: stored, client: client)
    }

    /// A credential other than `stale` that is not about to expire: the stored one if it is
    /// such, else the result of a refresh (joining one that is already running).
    func credential(newerThan stale: Credential?, client: ClientHandle) async throws(NetworkError) -> Credential {
        if let inFlight { return try await Self.wait(for: inFlight) }
        var stored: Credential?
        var readAt: Int
        repeat {
            readAt = generation
            stored = try await Self.read(store)
            // The actor may have started a refresh while this call waited for the store.
            if let inFlight { return try await Self.wait(for: inFlight) }
            // Or finished one, and the read may have seen what that refresh replaced: read again.
        } while readAt != generation
        if let stored, !stored.sameTokens(as: stale), !isExpiring(stored) { return stored }
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
            self.finished(shared, outcome)
            shared.finish(outcome)
        }
        return try await Self.wait(for: shared)
    }

    private func isExpiring(_ credential: Credential) -> Bool {
        guard let expiresAt = credential.expiresAt else { return false }
        // In seconds as a Double: a server's lifetime can be any number (1e300), which a
        // Duration cannot hold.
        var leeway = leeway.seconds
        if let issued, issued.credential.sameTokens(as: credential) {
            let lifetime = expiresAt.timeIntervalSince(issued.at)
            guard lifetime > 0 else { return false }
            leeway = min(leeway, lifetime / 2)
        }
        return expiresAt.timeIntervalSinceNow <= leeway
    }

    private func finished(_ shared: SharedOutcome<Credential>, _ outcome: Result<Credential, any Error>) {
        if inFlight === shared { inFlight = nil }
        generation += 1
        if case .success(let credential) = outcome { issued = (credential, Date()) }
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
        } catch is CancellationError {
            throw NetworkError(.cancelled, "The request was cancelled while the stored credential was read.")
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
                if NetworkError.wrapping(error).code == .cancelled {
                    return .failure(NetworkError(.cancelled, "The token refresh was cancelled.", underlying: error))
                }
                lastError = error
                do {
                    let current = try await store.credential()
                    // The app logged in meanwhile (perhaps the re-login layer, inside this fetch).
                    if let current, !current.sameTokens(as: refresh.previous) { return .success(current) }
                    // The app logged out meanwhile: the old session's refresh token is not sent again.
                    if current == nil, refresh.previous != nil {
                        return .failure(
                            NetworkError(
                                .tokenRefreshFailed, "The session ended while the token was being refreshed.",
                                underlying: error))
                    }
                } catch {
                    // Unreadable now: the next attempt reads it again.
                }
                if attempt < attempts { try? await Task.sleep(for: backoff) }
                continue
            }
            do {
                if try await store.replaceCredential(refresh.previous, with: credential) { return .success(credential) }
            } catch {
                return .failure(
                    NetworkError(.tokenRefreshFailed, "Storing the refreshed credential failed.", underlying: error))
            }
            // The app changed the session meanwhile: its choice wins.
            do {
                if let current = try await store.credential(), !current.sameTokens(as: refresh.previous) {
                    return .success(current)
                }
            } catch {
                return .failure(
                    NetworkError(
                        .tokenRefreshFailed, "Reading the credential after a refresh failed.", underlying: error))
            }
            return .failure(
                NetworkError(.tokenRefreshFailed, "The session ended while the token was being refreshed."))
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

    /// Creates the value a fetch gets, for testing a fetch of your own.
    /// - Parameters:
    ///   - previous: The credential being replaced.
    ///   - client: The client to send the fetch with.
    public init(previous: Credential?, client: ClientHandle) {
        self.previous = previous
        self.client = client
    }
}
