/// Where the token lives between requests: memory, the keychain, a file. Courier reads it before
/// a request and writes it after each refresh.
public protocol TokenStore: Sendable {
    /// The current token, or `nil` when there is none yet.
    func token() async -> String?
    /// Replaces the token (`nil` forgets it).
    /// - Parameter token: The new token.
    func setToken(_ token: String?) async
}

/// A ``TokenStore`` in memory.
public actor InMemoryTokenStore: TokenStore {
    private var current: String?

    /// Creates a store.
    /// - Parameter token: The initial token, if any.
    public init(token: String? = nil) { current = token }

    /// The current token.
    public func token() async -> String? { current }

    /// Replaces the token.
    /// - Parameter token: The new token.
    public func setToken(_ token: String?) async { current = token }
}
