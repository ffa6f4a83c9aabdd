import Foundation

/// Fetches tokens one at a time for all callers (single flight), within a budget.
///
/// - A caller that failed with token *t* asks for a token newer than *t*: if the store already
///   holds another one (someone refreshed meanwhile), it gets that one without a refresh.
/// - While a refresh runs, every other caller waits for it and gets its result; a failed refresh
///   fails each of them once.
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
    private var inFlight: Task<String, any Error>?
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
        if let inFlight { return try await Self.value(of: inFlight) }
        let stored = await store.token()
        // The actor may have started a refresh while this call waited for the store.
        if let inFlight { return try await Self.value(of: inFlight) }
        if let stored, stored != stale { return stored }
        // From here to `inFlight = task` nothing suspends, so only one caller starts a refresh.
        let now = ContinuousClock.now
        starts.removeAll { now - $0 > window }
        guard starts.count < limit else {
            throw NetworkError(
                .tokenRefreshFailed, "The token was refreshed \(limit) times within \(window); not trying again yet.")
        }
        starts.append(now)
        refreshCount += 1
        let (store, fetch, attempts, backoff) = (self.store, self.fetch, self.attempts, self.backoff)
        let task = Task<String, any Error> {
            var lastError: (any Error)?
            for attempt in 1...attempts {
                do {
                    let token = try await fetch()
                    await store.setToken(token)
                    return token
                } catch {
                    lastError = error
                    if attempt < attempts { try await Task.sleep(for: backoff) }
                }
            }
            throw NetworkError(
                .tokenRefreshFailed, "Fetching the token failed \(attempts) times.", underlying: lastError)
        }
        inFlight = task
        defer { inFlight = nil }
        return try await Self.value(of: task)
    }

    /// The task's value, with any failure as ``NetworkError/Code/tokenRefreshFailed``.
    private static func value(of task: Task<String, any Error>) async throws -> String {
        do {
            return try await task.value
        } catch let error as NetworkError where error.code == .tokenRefreshFailed {
            throw error
        } catch {
            throw NetworkError(.tokenRefreshFailed, "Fetching the token failed.", underlying: error)
        }
    }
}
