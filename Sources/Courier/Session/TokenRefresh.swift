/// What a session's `refresh` closure gets: the credential it renews, and a client to send the
/// refresh with.
public struct TokenRefresh: Sendable {
    /// The credential being renewed, with its refresh token.
    public let previous: Credential
    /// The client the session belongs to, without the token and the silent login: what is sent
    /// through it after a logout is refused with ``NetworkError/Code/cancelled``.
    public let client: ClientHandle

    /// Creates the value a refresh gets, for testing a refresh of your own.
    /// - Parameters:
    ///   - previous: The credential being renewed.
    ///   - client: The client to send the refresh with.
    public init(previous: Credential, client: ClientHandle) {
        self.previous = previous
        self.client = client
    }
}

/// What a session's `logIn` closure gets: the answer that asked for a new login, the credential
/// it replaces, and a client to log in with.
public struct ReLogin: Sendable {
    /// The HTTP status of the answer that asked for the login.
    public let status: Int
    /// Its business code (99 "not logged in", …), if its body is an envelope.
    public let businessCode: BusinessCode?
    /// The credential the backend no longer takes.
    public let previous: Credential
    /// The client the session belongs to, without the token and the silent login: what is sent
    /// through it after a logout is refused with ``NetworkError/Code/cancelled``, so a logout
    /// stops the login. Log in through it, not through a client of your own.
    public let client: ClientHandle

    /// Creates the value a login gets, for testing a login of your own.
    /// - Parameters:
    ///   - status: The HTTP status of the answer that asked for the login.
    ///   - businessCode: Its business code, if any.
    ///   - previous: The credential the backend no longer takes.
    ///   - client: The client to log in with.
    public init(status: Int, businessCode: BusinessCode?, previous: Credential, client: ClientHandle) {
        self.status = status
        self.businessCode = businessCode
        self.previous = previous
        self.client = client
    }
}
