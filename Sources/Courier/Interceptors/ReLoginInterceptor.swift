import Foundation

/// Logs in again when the backend says the session is gone: on configured business codes (the
/// seeds' 99 "not logged in" and 500 "logged in elsewhere") and, optionally, on HTTP 401.
///
/// One re-login runs at a time for all callers; a request that meets a re-login code after
/// another request's re-login already succeeded is simply replayed. After a successful re-login
/// the request is replayed once; if the replay still asks for a login, or the handler fails, the
/// request throws ``NetworkError/Code/sessionExpired`` and ``SessionEvent/sessionExpired`` is sent.
///
/// Place it outside the token layer, so a replay carries the new session's token.
///
/// ```swift
/// .reLogin(codes: [99, 500], events: sessionEvents) { try await session.logInAgain() }
/// ```
public struct ReLoginInterceptor: Interceptor {
    private let codes: Set<Int>
    private let onUnauthorized: Bool
    private let events: SessionEvents?
    private let coordinator: Coordinator

    /// Creates the layer.
    /// - Parameters:
    ///   - codes: Business codes that mean "log in again".
    ///   - onUnauthorized: Whether HTTP 401 means it too.
    ///   - events: Where session events are sent, if anywhere.
    ///   - handler: Logs in again; the app's code.
    public init(
        codes: Set<Int> = [99, 500], onUnauthorized: Bool = false, events: SessionEvents? = nil,
        handler: @escaping @Sendable () async throws -> Void
    ) {
        self.codes = codes
        self.onUnauthorized = onUnauthorized
        self.events = events
        self.coordinator = Coordinator(handler: handler)
    }

    /// ``InterceptorLayer/reLogin``.
    public var layer: InterceptorLayer { .reLogin }

    /// How many re-logins this layer has run, for tests and diagnostics.
    public var reLoginCount: Int {
        get async { await coordinator.count }
    }

    /// Sends the request; on a re-login answer, logs in again (once for all callers) and replays it.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Reads business codes.
    ///   - next: The inner layers.
    /// - Returns: The response.
    /// - Throws: ``NetworkError/Code/sessionExpired``; whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        let generation = await coordinator.generation
        let response = try await next(request)
        guard needsLogin(response, context) else { return response }
        do {
            try await coordinator.reLogin(after: generation, events: events)
        } catch {
            events?.send(.sessionExpired)
            throw NetworkError(.sessionExpired, "Logging in again failed.", underlying: error)
        }
        let replayed = try await next(request)
        guard !needsLogin(replayed, context) else {
            events?.send(.sessionExpired)
            var error = NetworkError(.sessionExpired, "The session expired and logging in again did not help.")
            error.status = replayed.status
            error.businessCode = context.businessCode(in: replayed)
            throw error
        }
        return replayed
    }

    private func needsLogin(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        if onUnauthorized && response.status == 401 { return true }
        guard let code = context.businessCode(in: response) else { return false }
        return codes.contains(code)
    }

    /// Runs the handler one at a time. `generation` counts successful re-logins, so a caller that
    /// saw the old session can tell that a new one already exists.
    actor Coordinator {
        private let handler: @Sendable () async throws -> Void
        private var running: Task<Void, any Error>?
        private(set) var generation = 0
        private(set) var count = 0

        init(handler: @escaping @Sendable () async throws -> Void) { self.handler = handler }

        /// Ensures a re-login newer than `seen` has succeeded: joins the running one, returns at
        /// once if one succeeded since, or starts one.
        func reLogin(after seen: Int, events: SessionEvents?) async throws {
            if let running { return try await running.value }
            guard generation == seen else { return }
            count += 1
            events?.send(.reLoginNeeded)
            let task = Task { try await handler() }
            running = task
            defer { running = nil }
            try await task.value
            generation += 1
            events?.send(.reLoginSucceeded)
        }
    }
}

extension Interceptor where Self == ReLoginInterceptor {
    /// A ``ReLoginInterceptor``.
    /// - Parameters:
    ///   - codes: Business codes that mean "log in again".
    ///   - onUnauthorized: Whether HTTP 401 means it too.
    ///   - events: Where session events are sent.
    ///   - handler: Logs in again.
    /// - Returns: The layer.
    public static func reLogin(
        codes: Set<Int> = [99, 500], onUnauthorized: Bool = false, events: SessionEvents? = nil,
        handler: @escaping @Sendable () async throws -> Void
    ) -> Self {
        ReLoginInterceptor(codes: codes, onUnauthorized: onUnauthorized, events: events, handler: handler)
    }
}
