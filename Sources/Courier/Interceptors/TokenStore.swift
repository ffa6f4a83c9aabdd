/// Where the token lives between requests: memory, the keychain, a file. Courier reads it before
/// a request and writes it after each refresh.
///
/// A refresh stores its token with ``replaceToken(_:with:)``, only if the store still holds the
/// token that was refreshed: a logout (`setToken(nil)`) or a new login that happens while a
/// refresh runs is never overwritten by it.
public protocol TokenStore: Sendable {
    /// The current token, or `nil` when there is none yet.
    func token() async -> String?
    /// Replaces the token (`nil` forgets it: a logout).
    /// - Parameter token: The new token.
    func setToken(_ token: String?) async
    /// Stores `token` only if the current token is still `expected`, in one step.
    ///
    /// The default implementation reads and then writes, so another write can slip in between;
    /// a store that others write to (a keychain shared with an extension, say) should implement
    /// this atomically, as ``InMemoryTokenStore`` does.
    /// - Parameters:
    ///   - expected: The token the refresh replaced (`nil` when there was none).
    ///   - token: The new token.
    /// - Returns: Whether it was stored.
    func replaceToken(_ expected: String?, with token: String) async -> Bool
}

extension TokenStore {
    /// Reads, compares and writes (not atomic; see ``TokenStore/replaceToken(_:with:)``).
    public func replaceToken(_ expected: String?, with token: String) async -> Bool {
        guard await self.token() == expected else { return false }
        await setToken(token)
        return true
    }
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

    /// Stores `token` if the current token is `expected`, atomically.
    /// - Parameters:
    ///   - expected: The token the refresh replaced.
    ///   - token: The new token.
    /// - Returns: Whether it was stored.
    public func replaceToken(_ expected: String?, with token: String) async -> Bool {
        guard current == expected else { return false }
        current = token
        return true
    }
}
