import Foundation

/// Fetches tokens one at a time for all callers (single flight), within a budget.
///
/// - A caller that failed with token *t* asks for a token newer than *t*: if the store already
///   holds another one (someone refreshed meanwhile), it gets that one without a refresh.
/// - While a refresh runs, every other caller waits for it and gets its result; a failed refresh
///   fails each of them once. A caller whose task is cancelled stops waiting at once, with
///   ``NetworkError/Code/cancelled``; the refresh goes on for the others.
/// - A refresh stores its token only if the store still holds the token it replaced
///   (``TokenStore/replaceToken(_:with:)``). When the app logged out meanwhile, the refresh's
///   token is dropped and its waiters fail with ``NetworkError/Code/tokenRefreshFailed``; when
///   the app logged in again meanwhile, they get the new login's token.
/// - Each refresh tries the fetch up to `attempts` times with `backoff` between tries (the seeds
///   wait 0.5 s), sleeping without blocking a thread.
/// - At most `limit` refreshes start per `window`; beyond that callers fail at once with
///   ``NetworkError/Code/tokenRefreshFailed`` instead of hammering the token endpoint.
actor TokenRefresher {
    private let store: any TokenStore
    private let fetch: @Sendable () async throws -> String
    private let attempts: Int
    private let backoff: Duration
    private let limit: Int
    private let window: Duration
    private var inFlight: SharedOutcome<String>?
    private var starts: [ContinuousClock.Instant] = []
    private(set) var refreshCount = 0

    init(
        store: any TokenStore, fetch: @escaping @Sendable () async throws -> String, attempts: Int, backoff: Duration,
        limit: Int, window: Duration
    ) {
        self.store = store
        self.fetch = fetch
        self.attempts = max(attempts, 1)
        self.backoff = backoff
        self.limit = max(limit, 1)
        self.window = window
    }

    /// The stored token, fetched first when there is none.
    func currentToken() async throws -> String {
        if let token = await store.token() { return token }
        return try await token(newerThan: nil)
    }

    /// A token other than `stale`: the stored one if it differs, else the result of a refresh
    /// (joining one that is already running).
    func token(newerThan stale: String?) async throws -> String {
        if let inFlight { return try await Self.wait(for: inFlight) }
        let stored = await store.token()
        // The actor may have started a refresh while this call waited for the store.
        if let inFlight { return try await Self.wait(for: inFlight) }
        if let stored, stored != stale { return stored }
        // From here to `inFlight = shared` nothing suspends, so only one caller starts a refresh.
        let now = ContinuousClock.now
        starts.removeAll { now - $0 > window }
        guard starts.count < limit else {
            throw NetworkError(
                .tokenRefreshFailed, "The token was refreshed \(limit) times within \(window); not trying again yet.")
        }
        starts.append(now)
        refreshCount += 1
        let shared = SharedOutcome<String>()
        inFlight = shared
        // A task of its own: the refresh outlives any one caller's cancellation.
        Task { [store, fetch, attempts, backoff] in
            let outcome = await Self.refresh(
                replacing: stale, store: store, fetch: fetch, attempts: attempts, backoff: backoff)
            self.finished(shared)
            shared.finish(outcome)
        }
        return try await Self.wait(for: shared)
    }

    private func finished(_ shared: SharedOutcome<String>) {
        if inFlight === shared { inFlight = nil }
    }

    private static func wait(for shared: SharedOutcome<String>) async throws -> String {
        try await shared.value(whileWaitingFor: "a new token")
    }

    /// Fetches a token (with retries) and stores it in place of `stale`.
    private static func refresh(
        replacing stale: String?, store: any TokenStore, fetch: @Sendable () async throws -> String, attempts: Int,
        backoff: Duration
    ) async -> Result<String, any Error> {
        var lastError: (any Error)?
        for attempt in 1...attempts {
            do {
                let token = try await fetch()
                if await store.replaceToken(stale, with: token) { return .success(token) }
                // The app changed the session meanwhile: its choice wins.
                if let current = await store.token(), current != stale { return .success(current) }
                return .failure(
                    NetworkError(.tokenRefreshFailed, "The session ended while the token was being refreshed."))
            } catch {
                lastError = error
                if attempt < attempts { try? await Task.sleep(for: backoff) }
            }
        }
        if let error = lastError as? NetworkError, error.code == .tokenRefreshFailed { return .failure(error) }
        return .failure(
            NetworkError(.tokenRefreshFailed, "Fetching the token failed \(attempts) times.", underlying: lastError))
    }
}
