import Foundation

/// Logs in again when the backend says the session is gone: on configured business codes (often
/// 99 "not logged in" and 500 "logged in elsewhere") and, optionally, on HTTP 401.
///
/// One re-login runs at a time for all callers; a request that meets a re-login code after
/// another request's re-login already succeeded is simply replayed. After a successful re-login
/// the request is replayed once; if the replay still asks for a login, or the handler fails, the
/// request throws ``NetworkError/Code/sessionExpired`` (with the status and business code of the
/// answer that asked for the login) and ``SessionEvent/sessionExpired`` is sent,
/// once per session however many requests saw it end. A caller cancelled while a re-login runs
/// stops waiting at once (the re-login goes on for the others), and at most `limit` re-logins
/// start per `window`, so a backend that keeps asking cannot loop the app through its login.
///
/// A re-login under way when the app logs out (``NetworkClient/cancelAll()``) sends no login
/// afterwards: what the handler sends through ``ReLogin/client`` then is refused with
/// ``NetworkError/Code/cancelled``. That re-login ends without a ``SessionEvent`` and without
/// replaying anything, whatever the handler did; a request made after the logout that asks
/// for a login does not wait for it, but gets a re-login of its own. The handle guards what is
/// sent, not what the handler stores: store the new credential with
/// ``TokenStore/replaceCredential(_:with:)`` so a logout in between wins.
///
/// The handler is told which answer asked for the login (99 "not logged in" may want a silent
/// re-login, 500 "logged in elsewhere" a dialog) and gets a handle on the same client that skips
/// this layer and the token layer, for the login call. When many requests ask at once, the
/// handler runs once, told about the first of them.
///
/// Place it outside the token layer, so a replay carries the new session's token.
///
/// ```swift
/// .reLogin(codes: [99, 500], events: sessionEvents) { login in
///     let session = try await login.client.send(.logIn(savedAccount))
///     try await tokens.setCredential(Credential(accessToken: session.token))
/// }
/// ```
public struct ReLoginInterceptor: Interceptor {
    private let codes: Set<BusinessCode>
    private let logsInAgainOnUnauthorized: Bool
    private let coordinator: Coordinator

    /// Creates the layer.
    /// - Parameters:
    ///   - codes: Business codes that mean "log in again".
    ///   - logsInAgainOnUnauthorized: Whether HTTP 401 means it too.
    ///   - events: Where session events are sent, if anywhere.
    ///   - limit: At most this many re-logins start per `window`; beyond that requests fail at
    ///     once with ``NetworkError/Code/sessionExpired`` instead of running the handler again.
    ///   - window: The window of `limit`.
    ///   - handler: Logs in again; the app's code. It gets the answer's status and business code,
    ///     and a client handle for the login.
    public init(
        codes: Set<BusinessCode> = [99, 500], logsInAgainOnUnauthorized: Bool = false, events: SessionEvents? = nil,
        limit: Int = 3,
        window: Duration = .seconds(60), handler: @escaping @Sendable (ReLogin) async throws -> Void
    ) {
        self.codes = codes
        self.logsInAgainOnUnauthorized = logsInAgainOnUnauthorized
        self.coordinator = Coordinator(handler: handler, events: events, limit: limit, window: window)
    }

    /// ``InterceptorLayer/reLogin``.
    public var layer: InterceptorLayer { .reLogin }

    /// How many re-logins this layer has run (for this package's tests).
    package var reLoginCount: Int {
        get async { await coordinator.count }
    }

    /// Sends the request; on a re-login answer, logs in again (once for all callers) and replays it.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Reads business codes.
    ///   - next: The inner layers.
    /// - Returns: The response.
    /// - Throws: ``NetworkError/Code/sessionExpired``; ``NetworkError/Code/cancelled`` when the
    ///   caller is cancelled while a re-login runs, or ``NetworkClient/cancelAll()`` ran since
    ///   the request began; whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        let seen = await coordinator.session
        let response = try await next(request)
        guard needsLogin(response, context) else {
            if !seen.aliveSinceEnd { await coordinator.noteAlive() }
            return response
        }
        let cause = ReLogin(
            status: response.status, businessCode: context.businessCode(in: response),
            client: context.clientOfThisRequest(skipping: [.reLogin, .token]))
        do {
            try await coordinator.reLogin(after: seen, cause: cause)
        } catch let error as NetworkError where error.code == .cancelled {
            throw error
        } catch {
            // The error says which answer asked for the login: 99 "not logged in" and 500
            // "logged in elsewhere" call for different screens.
            var failure =
                (error as? NetworkError).flatMap { $0.code == .sessionExpired ? $0 : nil }
                ?? NetworkError(.sessionExpired, "Logging in again failed.", underlying: error)
            failure.status = failure.status ?? cause.status
            failure.businessCode = failure.businessCode ?? cause.businessCode
            throw failure
        }
        let session = await coordinator.session
        let replayed = try await next(request)
        guard !needsLogin(replayed, context) else {
            await coordinator.expire(session)
            var error = NetworkError(.sessionExpired, "The session expired and logging in again did not help.")
            error.status = replayed.status
            error.businessCode = context.businessCode(in: replayed)
            throw error
        }
        return replayed
    }

    private func needsLogin(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        if logsInAgainOnUnauthorized && response.status == 401 { return true }
        guard !codes.isEmpty, let code = context.businessCode(in: response) else { return false }
        return codes.contains(code)
    }

    /// Runs the handler one at a time, and announces each end of a session with one
    /// ``SessionEvent/sessionExpired``, however many requests saw it.
    ///
    /// A request remembers the ``Session`` it was sent in: `generation` counts successful
    /// re-logins, so a caller that saw the old session can tell that a new one exists, and
    /// `ended` counts announced ends, so a request sent before an end was announced shares it
    /// (it fails without a re-login or a second event), while one sent after it (a login the
    /// app made itself came in between) belongs to a session of its own.
    actor Coordinator {
        /// What a request saw when it was sent.
        struct Session: Sendable {
            let generation: Int
            let ended: Int
            /// Whether a request succeeded since the last announced end (or none was announced).
            let aliveSinceEnd: Bool
        }

        private let handler: @Sendable (ReLogin) async throws -> Void
        private let events: SessionEvents?
        private let limit: Int
        private let window: Duration
        /// The re-login under way, and the handle its handler logs in with.
        private var running: (outcome: SharedOutcome<Void>, client: ClientHandle)?
        private var starts: [ContinuousClock.Instant] = []
        private var generation = 0
        private var ended = 0
        private var aliveSinceEnd = true
        /// Re-login attempts started.
        private(set) var count = 0

        var session: Session { Session(generation: generation, ended: ended, aliveSinceEnd: aliveSinceEnd) }

        /// A request went through without a re-login code after an announced end: a session
        /// lives again (the app logged in itself, or the answer needs none).
        func noteAlive() { aliveSinceEnd = true }

        init(
            handler: @escaping @Sendable (ReLogin) async throws -> Void, events: SessionEvents?, limit: Int,
            window: Duration
        ) {
            self.handler = handler
            self.events = events
            self.limit = max(limit, 1)
            self.window = window
        }

        /// Ensures a re-login newer than `seen` has succeeded: joins the running one, returns at
        /// once if one succeeded since, or starts one (within the budget) for `cause`. A request
        /// from before a ``NetworkClient/cancelAll()`` (a logout) starts none; one from after it
        /// does not join a re-login from before it (whose login is refused), but leaves that one
        /// to end on its own and starts its own.
        func reLogin(after seen: Session, cause: ReLogin) async throws {
            guard !cause.client.isPastCancelAll, !Task.isCancelled else {
                throw NetworkError(.cancelled, "The request was cancelled before logging in again.")
            }
            if let current = running {
                if current.client.isOfSameTime(as: cause.client) {
                    return try await current.outcome.value(whileWaitingFor: "the re-login")
                }
                running = nil
            }
            guard generation == seen.generation else { return }
            guard ended == seen.ended else {
                throw NetworkError(.sessionExpired, "The session ended while this request was under way.")
            }
            let now = ContinuousClock.now
            starts.removeAll { now - $0 > window }
            guard starts.count < limit else {
                // Past the limit, an end is announced again only once something lived since the
                // last one: a backend that keeps asking must not loop the app through its login.
                if aliveSinceEnd { announceEnd() }
                throw NetworkError(
                    .sessionExpired, "Logged in again \(limit) times within \(window); not trying again yet.")
            }
            starts.append(now)
            count += 1
            events?.send(.reLoginNeeded)
            let shared = SharedOutcome<Void>()
            running = (shared, cause.client)
            // A task of its own: the re-login outlives any one caller's cancellation.
            Task { [handler, session] in
                var failure: (any Error)?
                do { try await handler(cause) } catch { failure = error }
                self.ended(shared, failure, startedIn: session, at: now, cancelledAll: cause.client.isPastCancelAll)
            }
            try await shared.value(whileWaitingFor: "the re-login")
        }

        /// Ends a re-login, with the handler's `failure` if it failed. When
        /// ``NetworkClient/cancelAll()`` ran since its request began, the app ended the session
        /// itself (a logout): whatever the handler did, nothing is replayed in the old session,
        /// no end is announced, the attempt does not count against the limit, and its callers
        /// are cancelled.
        private func ended(
            _ shared: SharedOutcome<Void>, _ failure: (any Error)?, startedIn session: Session,
            at start: ContinuousClock.Instant, cancelledAll: Bool
        ) {
            // A request from after a logout may have left this one behind and started its own.
            if running?.outcome === shared { running = nil }
            if cancelledAll {
                if let index = starts.firstIndex(of: start) { starts.remove(at: index) }
                shared.finish(
                    .failure(NetworkError(.cancelled, "cancelAll() ran while logging in again.", underlying: failure)))
            } else if let failure {
                expire(session)
                shared.finish(.failure(NetworkError(.sessionExpired, "Logging in again failed.", underlying: failure)))
            } else {
                generation += 1
                events?.send(.reLoginSucceeded)
                shared.finish(.success(()))
            }
        }

        /// Announces that `session` ended, unless a newer one began since or its end was
        /// announced already.
        func expire(_ session: Session) {
            guard session.generation == generation, session.ended == ended else { return }
            announceEnd()
        }

        private func announceEnd() {
            ended += 1
            aliveSinceEnd = false
            events?.send(.sessionExpired)
        }
    }
}

extension Interceptor where Self == ReLoginInterceptor {
    /// A ``ReLoginInterceptor``.
    /// - Parameters:
    ///   - codes: Business codes that mean "log in again".
    ///   - logsInAgainOnUnauthorized: Whether HTTP 401 means it too.
    ///   - events: Where session events are sent.
    ///   - limit: At most this many re-logins start per `window`.
    ///   - window: The window of `limit`.
    ///   - handler: Logs in again, told which answer asked for it.
    /// - Returns: The layer.
    public static func reLogin(
        codes: Set<BusinessCode> = [99, 500], logsInAgainOnUnauthorized: Bool = false, events: SessionEvents? = nil,
        limit: Int = 3,
        window: Duration = .seconds(60), handler: @escaping @Sendable (ReLogin) async throws -> Void
    ) -> Self {
        ReLoginInterceptor(
            codes: codes, logsInAgainOnUnauthorized: logsInAgainOnUnauthorized, events: events, limit: limit,
            window: window, handler: handler
        )
    }
}

/// What a re-login handler is told: the answer that asked for the login, and a client to log in
/// with.
public struct ReLogin: Sendable {
    /// The HTTP status of the answer that asked for the login.
    public let status: Int
    /// Its business code (99 "not logged in", 500 "logged in elsewhere", …), if its body is an
    /// envelope.
    public let businessCode: BusinessCode?
    /// The client the layer belongs to, skipping the re-login and token layers. What is sent
    /// through it once ``NetworkClient/cancelAll()`` ran (a logout) after the request that asked
    /// for the login began is refused with ``NetworkError/Code/cancelled``: log in through it,
    /// not through a client of your own, so a logout stops the login.
    public let client: ClientHandle

    /// Creates the value a handler gets, for testing a handler of your own.
    /// - Parameters:
    ///   - status: The HTTP status of the answer that asked for the login.
    ///   - businessCode: Its business code, if any.
    ///   - client: The client to log in with.
    public init(status: Int, businessCode: BusinessCode?, client: ClientHandle) {
        self.status = status
        self.businessCode = businessCode
        self.client = client
    }
}
