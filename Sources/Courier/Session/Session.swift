import Foundation

/// Who is signed in: the credential, how to refresh it and log in again, which business codes
/// mean what, and the one logout. Configure it once and give it to the client; every request
/// carries its token, and no answer, token or cached body crosses from one user to the next.
///
/// ```swift
/// let session = Session(
///     store: InMemoryTokenStore(),   // KeychainTokenStore(service:) on Apple platforms
///     refreshCodes: [401_001],       // "token expired": refresh it
///     logInCodes: [99],              // "not logged in": log in again without the user
///     askUserCodes: [500],           // "logged in elsewhere": end the session, ask the user
///     refresh: { refresh in
///         let answer = try await refresh.client.send(.refreshToken(refresh.previous.refreshToken ?? ""))
///         return Credential(accessToken: answer.token, refreshToken: answer.refreshToken)
///     },
///     logIn: { login in
///         let answer = try await login.client.send(.logIn(savedAccount))
///         return Credential(accessToken: answer.token, refreshToken: answer.refreshToken)
///     })
/// let client = NetworkClient(configuration: .init(baseURL: base, session: session))
///
/// let answer = try await client.send(.logIn(["user": name, "password": password]))   // the login screen
/// try await session.logIn(Credential(accessToken: answer.token, userID: name))
/// try await session.logOut()                                                         // the one logout
/// ```
///
/// Which code goes where: the login screen calls ``logIn(_:)``; the `refresh` closure renews a
/// token that expires or that the backend refuses (HTTP 401 or a refresh code); the `logIn`
/// closure logs in again without the user when the backend says the session is gone (a log-in
/// code); an ask-the-user code ends the session; ``logOut()`` ends it for good.
///
/// While nobody is signed in, requests go out without a token and the session leaves their
/// answers alone. An endpoint opts out of the session with `.skipping(.token)` (no token, no
/// refresh, no login), or of the silent login alone with `.skipping(.reLogin)`.
///
/// **The epoch.** Logging in, logging out and the backend ending the session each move the
/// session to a new epoch. Every request takes the epoch when it begins, and every step of it
/// that could send or store something checks it again after each wait: the token refresh
/// before each attempt and after each pause, the store of a new credential, the silent login's
/// requests, each request just before it goes on the wire, the cache's reads and writes and a
/// `304`'s merge, joining an identical request in flight, and a clock correction. Work of an
/// older epoch ends with ``NetworkError/Code/cancelled`` (``NetworkError/Code/sessionExpired``
/// when the backend ended it) and sends and stores nothing more. So a logout at any moment
/// cannot be undone by a refresh or a login under way, and one user's answers never reach the
/// next.
///
/// A session serves every client it is given to: a logout cancels the requests of each of them
/// and empties each one's cache. The refresh and the silent login are sent through the client
/// of the request that needed them: with clients of several backends on one session, give the
/// refresh and login endpoints absolute URLs.
///
/// `@unchecked Sendable`: `state` is guarded by `lock`; every write of the store runs inside
/// `writes`, one at a time.
public final class Session: @unchecked Sendable {
    /// Where the token goes in a request.
    public enum TokenPlacement: Sendable, Hashable {
        /// In a header, after a prefix: `.header("token")`, or `Authorization: Bearer …` with
        /// ``bearer``.
        case header(String, prefix: String = "")
        /// In a parameter (query for GET/HEAD/DELETE, form or JSON body otherwise).
        case parameter(String)

        /// `Authorization: Bearer <token>`.
        public static let bearer = TokenPlacement.header("Authorization", prefix: "Bearer ")
    }

    /// How hard the session tries before it gives up, so a failing backend is not hammered.
    public struct Limits: Sendable, Hashable {
        /// How often one refresh tries the `refresh` closure before failing. Default 3.
        public var refreshAttempts: Int
        /// The pause between those tries. Default 500 ms.
        public var refreshBackoff: Duration
        /// At most this many refreshes start per ``window``; past it requests fail with
        /// ``NetworkError/Code/tokenRefreshFailed``. Default 5.
        public var refreshes: Int
        /// At most this many silent logins start per ``window``; past it the session ends.
        /// Default 3.
        public var logIns: Int
        /// The window of ``refreshes`` and ``logIns``. Default 60 s. Both count for the session,
        /// across logins: an app that logs in again by itself each time the session ends is
        /// still held to them.
        public var window: Duration
        /// A credential that expires within this time is refreshed before it is sent; for one
        /// the session refreshed itself, at most half its lifetime, and one that arrived already
        /// expired is sent for the server to judge (a 401 then refreshes it). Default 30 s.
        public var refreshLeeway: Duration

        /// Creates limits.
        /// - Parameters:
        ///   - refreshAttempts: How often one refresh tries before failing.
        ///   - refreshBackoff: The pause between those tries.
        ///   - refreshes: At most this many refreshes per `window`.
        ///   - logIns: At most this many silent logins per `window`.
        ///   - window: The window of `refreshes` and `logIns`.
        ///   - refreshLeeway: How long before its expiry a credential is refreshed.
        public init(
            refreshAttempts: Int = 3, refreshBackoff: Duration = .milliseconds(500), refreshes: Int = 5,
            logIns: Int = 3, window: Duration = .seconds(60), refreshLeeway: Duration = .seconds(30)
        ) {
            self.refreshAttempts = max(refreshAttempts, 1)
            self.refreshBackoff = refreshBackoff
            self.refreshes = max(refreshes, 1)
            self.logIns = max(logIns, 1)
            self.window = window
            self.refreshLeeway = max(refreshLeeway, .zero)
        }
    }

    let store: any TokenStore
    let placement: TokenPlacement
    let refreshCodes: Set<BusinessCode>
    let refreshesOnUnauthorized: Bool
    let logInCodes: Set<BusinessCode>
    let askUserCodes: Set<BusinessCode>
    let limits: Limits
    let refresh: (@Sendable (TokenRefresh) async throws -> Credential)?
    let logInAgain: (@Sendable (ReLogin) async throws -> Credential)?
    let eventHub = SessionEvents()
    /// Every write of the store, one at a time: a logout's waits for a refresh's under way, and
    /// a refresh's that comes after a logout sees the new epoch and writes nothing.
    let writes = AsyncLock()
    let lock = NSLock()
    var state: State

    /// What the session knows, under `lock`.
    struct State {
        var epoch: UInt64 = 0
        /// Whether the store was read (or written) since the session was made.
        var loaded = false
        var credential: Credential?
        /// The credential the session last renewed itself, and when.
        var issued: (credential: Credential, at: Date)?
        /// The renewal under way, the limits' counts, and the counts of the credential signed
        /// in, so a request can tell that it was renewed (or a login succeeded) since it was sent.
        var renewals = Renewals()
        /// How the last epochs ended (their work fails with cancelled, or sessionExpired and the
        /// answer that ended it), and when each was settled.
        var endings: [Ending] = []
        /// Counts logouts: a login called before one, still waiting to be stored, gives way.
        var logouts: UInt64 = 0
        var clients: [WeakClient] = []
    }

    /// Creates a session.
    /// - Parameters:
    ///   - store: Where the credential is kept between launches.
    ///   - placement: Where the token goes in a request.
    ///   - refreshCodes: Business codes that mean "token expired": the token is refreshed and the
    ///     request sent again.
    ///   - refreshesOnUnauthorized: Whether HTTP 401 means "token expired" too.
    ///   - logInCodes: Business codes that mean "not logged in" (99, often): the session logs in
    ///     again without the user (`logIn`) and sends the request again. None by default.
    ///   - askUserCodes: Business codes that mean "ask the user" (500 "logged in elsewhere",
    ///     often): the session ends at once, and requests fail with
    ///     ``NetworkError/Code/sessionExpired``. None by default.
    ///   - limits: How hard the session tries before it gives up.
    ///   - refresh: Renews the credential; it gets the one it replaces and a client to send
    ///     with. Without it, an expired token is renewed by `logIn`.
    ///   - logIn: Logs in again without the user (a saved account, a device login); it gets the
    ///     answer that asked and a client to send with. Without it, a log-in code ends the
    ///     session.
    public init(
        store: any TokenStore = InMemoryTokenStore(), placement: TokenPlacement = .header("token"),
        refreshCodes: Set<BusinessCode> = [], refreshesOnUnauthorized: Bool = true,
        logInCodes: Set<BusinessCode> = [], askUserCodes: Set<BusinessCode> = [], limits: Limits = Limits(),
        refresh: (@Sendable (TokenRefresh) async throws -> Credential)? = nil,
        logIn: (@Sendable (ReLogin) async throws -> Credential)? = nil
    ) {
        self.store = store
        self.placement = placement
        self.refreshCodes = refreshCodes
        self.refreshesOnUnauthorized = refreshesOnUnauthorized
        self.logInCodes = logInCodes
        self.askUserCodes = askUserCodes
        // Limits' fields can be set to anything after they were made.
        var limits = limits
        limits.refreshAttempts = max(limits.refreshAttempts, 1)
        limits.refreshes = max(limits.refreshes, 1)
        limits.logIns = max(limits.logIns, 1)
        limits.refreshLeeway = max(limits.refreshLeeway, .zero)
        self.limits = limits
        self.refresh = refresh
        self.logInAgain = logIn
        self.state = State()
    }

    /// The session of a client configured without one: nobody ever signs in.
    static func signedOut() -> Session {
        let session = Session(logInCodes: [], askUserCodes: [])
        session.state.loaded = true
        return session
    }

    // MARK: - Logging in and out

    /// Signs a user in with the credential the app's login gave, after the login screen. When
    /// someone else is signed in, this logs them out first (see ``logOut()``): switching account
    /// is a logout and a login.
    ///
    /// Requests under way when it is called end with ``NetworkError/Code/cancelled``: they
    /// began for whoever was signed in before.
    /// - Parameter credential: The new credential; without a ``Credential/userID`` it gets a
    ///   random one.
    /// - Throws: ``NetworkError/Code/credentialStore`` when the store cannot be written (the
    ///   session is then as it was); ``NetworkError/Code/cancelled`` when ``logOut()`` was called
    ///   while this waited for the store.
    public func logIn(_ credential: Credential) async throws(NetworkError) {
        var named = credential
        if named.userID == nil { named.userID = RandomPool.shared.hexString(ofBytes: 16) }
        let credential = named
        // A logout called after this login, while it waits for the store, wins.
        let logoutsBefore = lock.withLock { state.logouts }
        let outcome: Result<(replaced: Bool, ended: EndedEpoch), NetworkError> = await writes.run {
            guard lock.withLock({ state.logouts == logoutsBefore }) else {
                return .failure(NetworkError(.cancelled, "The app logged out while logging in."))
            }
            // Who was signed in, when this is the session's first step: a store that cannot be
            // read is taken for someone, so the login ends what came before all the same.
            _ = await loadHoldingWrites()
            let began = lock.withLock { state.epoch }
            let written = await Task { [store] in try await store.setCredential(credential) }.result
            if case .failure(let error) = written {
                return .failure(NetworkError(.credentialStore, "Storing the credential failed.", underlying: error))
            }
            return lock.withLock {
                // A logout called meanwhile (while the store was read, or written) came after
                // this login: it wins, and clears the store.
                guard state.epoch == began, state.logouts == logoutsBefore else {
                    return .failure(NetworkError(.cancelled, "The app logged out while logging in."))
                }
                let replaced = state.credential != nil || !state.loaded
                return .success((replaced, advance(to: credential)))
            }
        }
        let (replaced, ended) = try outcome.get()
        if replaced { eventHub.send(.loggedOut) }
        await endWork(of: ended, purging: replaced)
        eventHub.send(.loggedIn)
    }

    /// Signs the user out, in one step: the session moves to a new epoch, so nothing under way
    /// sends or stores anything more for them (a refresh, a silent login, an answer on its way
    /// to the cache); ``SessionEvent/loggedOut`` is sent; every request of every client on this
    /// session ends with ``NetworkError/Code/cancelled``; each client's cache is emptied; and the
    /// credential is removed from the store, unless a login called meanwhile stored its own.
    /// Requests made afterwards go out without a token until the next ``logIn(_:)``.
    /// - Throws: ``NetworkError/Code/credentialStore`` when the store cannot be written: the
    ///   user is signed out in this process, but the store still holds the credential.
    public func logOut() async throws(NetworkError) {
        let (ended, epoch) = lock.withLock {
            state.logouts += 1
            return (advance(to: nil), state.epoch)
        }
        eventHub.send(.loggedOut)
        await endWork(of: ended, purging: true)
        let failure: NetworkError? = await writes.run { () async -> NetworkError? in
            // A login since stored its own credential, which is not removed.
            guard lock.withLock({ state.epoch == epoch }) else { return nil }
            let removed = await Task { [store] in try await store.setCredential(nil) }.result
            guard case .failure(let error) = removed else { return nil }
            return NetworkError(.credentialStore, "Removing the stored credential failed.", underlying: error)
        }
        if let failure { throw failure }
    }

    /// The credential of whoever is signed in, or `nil`; read from the store on first use.
    /// - Returns: The credential.
    /// - Throws: ``NetworkError/Code/credentialStore`` when the store cannot be read.
    public func credential() async throws(NetworkError) -> Credential? {
        try await load()
        return lock.withLock { state.credential }
    }

    /// A new stream of the session's events from now on: logins, logouts, silent logins and
    /// the end of a session. It ends when the consumer stops iterating.
    /// - Returns: The stream.
    public func events() -> AsyncStream<SessionEvent> {
        eventHub.updates()
    }
}
