import Foundation

/// Attaches the access token to every request, fetches a credential when there is none (a
/// `getToken` call), refreshes it shortly before its ``Credential/expiresAt``, and refreshes
/// it once when the server says it expired: on HTTP 401 and on configured business codes.
/// Refreshes are single-flight: a thousand requests that meet an expired token together cause
/// one refresh, and each is then replayed once with the new token.
///
/// The fetch gets the credential it replaces (with its refresh token) and a handle on the same
/// client that skips this layer, so no second client is needed:
///
/// ```swift
/// .token(store: tokens, refreshCodes: [401_001]) { refresh in
///     let answer = try await refresh.client.send(.refreshToken(refresh.previous?.refreshToken))
///     return Credential(accessToken: answer.token, refreshToken: answer.refreshToken)
/// }
/// ```
public struct TokenInterceptor: Interceptor {
    /// Where the token goes.
    public enum Placement: Sendable, Hashable {
        /// In a header, after a prefix: `.header("token")`, or `Authorization: Bearer …` with
        /// ``bearer``.
        case header(String, prefix: String = "")
        /// In a parameter (query for GET/HEAD/DELETE, form or JSON body otherwise).
        case parameter(String)

        /// `Authorization: Bearer <token>`.
        public static let bearer = Placement.header("Authorization", prefix: "Bearer ")
    }

    private let placement: Placement
    private let refreshCodes: Set<BusinessCode>
    private let refreshesOnUnauthorized: Bool
    private let refresher: TokenRefresher

    /// Creates the layer.
    /// - Parameters:
    ///   - store: Where the token lives.
    ///   - placement: Where the token goes in a request.
    ///   - refreshCodes: Business codes that mean "token expired".
    ///   - refreshesOnUnauthorized: Whether HTTP 401 means "token expired".
    ///   - fetchAttempts: How often one refresh tries `fetch` before failing.
    ///   - fetchBackoff: The pause between those tries.
    ///   - refreshLimit: At most this many refreshes start per `refreshWindow`.
    ///   - refreshWindow: The window of `refreshLimit`.
    ///   - refreshLeeway: A credential that expires within this time is refreshed before it is
    ///     sent; for one this layer fetched, at most half its lifetime, and one that arrived
    ///     already expired is sent for the server to judge (a 401 then refreshes it).
    ///   - fetch: Fetches a new credential.
    public init(
        store: any TokenStore, placement: Placement = .header("token"), refreshCodes: Set<BusinessCode> = [],
        refreshesOnUnauthorized: Bool = true, fetchAttempts: Int = 3, fetchBackoff: Duration = .milliseconds(500),
        refreshLimit: Int = 5, refreshWindow: Duration = .seconds(60), refreshLeeway: Duration = .seconds(30),
        fetch: @escaping @Sendable (TokenRefresh) async throws -> Credential
    ) {
        self.placement = placement
        self.refreshCodes = refreshCodes
        self.refreshesOnUnauthorized = refreshesOnUnauthorized
        self.refresher = TokenRefresher(
            store: store, fetch: fetch, attempts: fetchAttempts, backoff: fetchBackoff, limit: refreshLimit,
            window: refreshWindow, leeway: refreshLeeway)
    }

    /// ``InterceptorLayer/token``.
    public var layer: InterceptorLayer { .token }

    /// How many refreshes this layer has started (for this package's tests).
    package var refreshCount: Int {
        get async { await refresher.refreshCount }
    }

    /// Sends the request with the current token; on an expiry answer, gets a newer token (one
    /// refresh for all callers) and replays the request once.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Reads business codes.
    ///   - next: The inner layers.
    /// - Returns: The response.
    /// - Throws: ``NetworkError/Code/tokenRefreshFailed`` when there is no token to send (the
    ///   store failed, or the fetch did); ``NetworkError/Code/cancelled`` when the request or
    ///   the fetch was cancelled; whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        // The token fetch goes through the client without this layer.
        let client = { context.client(skipping: [.token]) }
        // Most requests find a valid token in a store read at once: no wait for an actor.
        let credential =
            if let stored = refresher.credentialWithoutWaiting() {
                stored
            } else {
                try await refresher.currentCredential(client: client())
            }
        let response = try await next(try attaching(credential.accessToken, to: request))
        guard isExpiry(response, context) else { return response }
        let fresh = try await refresher.credential(newerThan: credential, client: client())
        return try await next(try attaching(fresh.accessToken, to: request))
    }

    private func isExpiry(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        if refreshesOnUnauthorized && response.status == 401 { return true }
        guard !refreshCodes.isEmpty, let code = context.businessCode(in: response) else { return false }
        return refreshCodes.contains(code)
    }

    private func attaching(_ token: String, to request: HTTPRequest) throws(NetworkError) -> HTTPRequest {
        switch placement {
        case .header(let name, let prefix):
            var request = request
            request.headers[name] = prefix + token
            return request
        case .parameter(let name):
            var request = request
            request.query.items.removeAll { $0.name == name }
            try request.addParametersIncludingJSON([name: token], merge: .replaceExisting)
            return request
        }
    }
}

extension Interceptor where Self == TokenInterceptor {
    /// A ``TokenInterceptor``, with every option of its initialiser.
    /// - Parameters:
    ///   - store: Where the token lives.
    ///   - placement: Where the token goes in a request.
    ///   - refreshCodes: Business codes that mean "token expired".
    ///   - refreshesOnUnauthorized: Whether HTTP 401 means "token expired".
    ///   - fetchAttempts: How often one refresh tries `fetch` before failing.
    ///   - fetchBackoff: The pause between those tries.
    ///   - refreshLimit: At most this many refreshes start per `refreshWindow`.
    ///   - refreshWindow: The window of `refreshLimit`.
    ///   - refreshLeeway: A credential that expires within this time is refreshed before it is
    ///     sent; for one this layer fetched, at most half its lifetime, and one that arrived
    ///     already expired is sent for the server to judge (a 401 then refreshes it).
    ///   - fetch: Fetches a new credential.
    /// - Returns: The layer.
    public static func token(
        store: any TokenStore, placement: TokenInterceptor.Placement = .header("token"),
        refreshCodes: Set<BusinessCode> = [],
        refreshesOnUnauthorized: Bool = true, fetchAttempts: Int = 3, fetchBackoff: Duration = .milliseconds(500),
        refreshLimit: Int = 5, refreshWindow: Duration = .seconds(60), refreshLeeway: Duration = .seconds(30),
        fetch: @escaping @Sendable (TokenRefresh) async throws -> Credential
    ) -> Self {
        TokenInterceptor(
            store: store, placement: placement, refreshCodes: refreshCodes,
            refreshesOnUnauthorized: refreshesOnUnauthorized, fetchAttempts: fetchAttempts, fetchBackoff: fetchBackoff,
            refreshLimit: refreshLimit, refreshWindow: refreshWindow, refreshLeeway: refreshLeeway, fetch: fetch)
    }
}
