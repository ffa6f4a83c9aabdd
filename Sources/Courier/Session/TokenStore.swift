import Foundation

/// Where a ``Session`` keeps its credential between launches: the keychain (`KeychainTokenStore`,
/// on Apple platforms), memory (``InMemoryTokenStore``), or a store of your own.
///
/// The session reads the store on its first request, and again before a refresh or a silent
/// login (to take a credential of the same user that another process, an app extension say,
/// stored meanwhile); it writes it on every change: a login, a refresh, a logout. Change the
/// credential through the session (``Session/logIn(_:)``, ``Session/logOut()``), not by writing
/// the store: the session keeps what it read, and only its own writes move it to a new user. Keep
/// every field of the credential, its ``Credential/userID`` included.
///
/// Every requirement may throw (a keychain read can fail): a request that needs the credential
/// then fails with ``NetworkError/Code/credentialStore``, carrying the store's error as its
/// ``NetworkError/underlying``; nothing is sent without the credential. A store that cannot be
/// read now (a locked keychain) throws rather than giving `nil`, which means nobody is signed in.
public protocol TokenStore: Sendable {
    /// The stored credential, or `nil` when there is none.
    /// - Throws: When the store cannot be read.
    func credential() async throws -> Credential?
    /// Replaces the credential (`nil` forgets it: a logout).
    /// - Parameter credential: The new credential.
    /// - Throws: When the store cannot be written.
    func setCredential(_ credential: Credential?) async throws
    /// Stores `credential` only if the current one is still `expected`, in one step.
    ///
    /// A refresh stores its credential this way, so a store that others write to as well (a
    /// keychain shared with an app extension, say) never loses their write to it. The default
    /// implementation reads and then writes, so another writer can slip in between; implement
    /// it atomically for such a store, as ``InMemoryTokenStore`` does. `KeychainTokenStore` does
    /// it in one step within the process only: the keychain has no compare-and-replace across
    /// processes.
    /// - Parameters:
    ///   - expected: The credential the refresh replaces.
    ///   - credential: The new credential.
    /// - Returns: Whether it was stored.
    /// - Throws: When the store cannot be read or written.
    func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool
}

extension TokenStore {
    /// Reads, compares and writes (not atomic; see ``TokenStore/replaceCredential(_:with:)``).
    /// - Parameters:
    ///   - expected: The credential the refresh replaces.
    ///   - credential: The new credential.
    /// - Returns: Whether it was stored.
    /// - Throws: When the store cannot be read or written.
    public func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool {
        guard try await self.credential() == expected else { return false }
        try await setCredential(credential)
        return true
    }
}

/// A ``TokenStore`` in memory: the credential lasts as long as the process.
public actor InMemoryTokenStore: TokenStore {
    private var current: Credential?

    /// Creates a store.
    /// - Parameter credential: The initial credential, if any.
    public init(credential: Credential? = nil) { current = credential }

    /// The current credential.
    /// - Returns: The credential, or `nil`.
    public func credential() -> Credential? { current }

    /// Replaces the credential.
    /// - Parameter credential: The new credential.
    public func setCredential(_ credential: Credential?) { current = credential }

    /// Stores `credential` if the current one is `expected`, atomically.
    /// - Parameters:
    ///   - expected: The credential the refresh replaces.
    ///   - credential: The new credential.
    /// - Returns: Whether it was stored.
    public func replaceCredential(_ expected: Credential?, with credential: Credential) -> Bool {
        guard current == expected else { return false }
        current = credential
        return true
    }
}
