import Foundation

/// What a login gives an app: the access token sent with each request, and optionally a
/// refresh token and the moment the access token expires.
///
/// With ``expiresAt`` set, the token layer refreshes the credential shortly *before* it
/// expires (``TokenInterceptor``'s `refreshLeeway`), so no request is sent with a token the
/// server is about to refuse.
public struct Credential: Sendable, Hashable, Codable {
    /// The token sent with each request.
    public var accessToken: String
    /// The token the app's refresh call sends to get a new access token, if the backend has one.
    public var refreshToken: String?
    /// When the access token expires, if the backend says.
    public var expiresAt: Date?

    /// Creates a credential.
    /// - Parameters:
    ///   - accessToken: The token sent with each request.
    ///   - refreshToken: The token that gets a new access token, if any.
    ///   - expiresAt: When the access token expires, if known.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    /// Whether `other` holds the same access and refresh tokens (the expiry aside, which a store
    /// may keep less precisely).
    /// - Parameter other: The other credential, if any.
    /// - Returns: Whether the tokens are the same.
    func sameTokens(as other: Credential?) -> Bool {
        accessToken == other?.accessToken && refreshToken == other?.refreshToken
    }
}

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The credential with its tokens replaced by `<redacted>`, so printing or logging it shows
    /// which tokens it holds and when it expires, never the tokens themselves.
    public var description: String {
        var parts = ["accessToken: <redacted>"]
        if refreshToken != nil { parts.append("refreshToken: <redacted>") }
        if let expiresAt { parts.append("expiresAt: \(expiresAt)") }
        return "Credential(" + parts.joined(separator: ", ") + ")"
    }

    /// The same redacted text as ``description``.
    public var debugDescription: String { description }

    /// What `dump(_:)` and debuggers show: the redacted ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["credential": description]) }
}

/// Where the credential lives between requests: memory, the keychain, a file. Courier reads it
/// before each request and writes it after each refresh.
///
/// Every requirement may throw (a keychain read can fail): the request then fails with
/// ``NetworkError/Code/tokenRefreshFailed``, carrying the store's error as its
/// ``NetworkError/underlying``; nothing is sent without the credential.
///
/// A refresh stores its credential with ``replaceCredential(_:with:)``, only if the store still
/// holds the credential that was refreshed: a logout (`setCredential(nil)`) or a new login that
/// happens while a refresh runs is never overwritten by it.
public protocol TokenStore: Sendable {
    /// The current credential, or `nil` when there is none (not yet, or after a logout). A store
    /// that cannot be read now (a locked keychain) throws instead: `nil` while a token refresh
    /// runs reads as a logout, which ends the refresh.
    func credential() async throws -> Credential?
    /// Replaces the credential (`nil` forgets it: a logout).
    /// - Parameter credential: The new credential.
    func setCredential(_ credential: Credential?) async throws
    /// Stores `credential` only if the current one is still `expected`, in one step.
    ///
    /// The default implementation reads and then writes, so another write can slip in between;
    /// a store that others write to (a keychain shared with an extension, say) should implement
    /// this atomically, as ``InMemoryTokenStore`` does.
    /// - Parameters:
    ///   - expected: The credential the refresh replaced (`nil` when there was none).
    ///   - credential: The new credential.
    /// - Returns: Whether it was stored.
    func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool
}

extension TokenStore {
    /// Reads, compares and writes (not atomic; see ``TokenStore/replaceCredential(_:with:)``).
    public func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool {
        guard try await self.credential() == expected else { return false }
        try await setCredential(credential)
        return true
    }
}

/// A ``TokenStore`` in memory.
public actor InMemoryTokenStore: TokenStore {
    /// The credential behind a lock as well as the actor, so that the token layer reads it
    /// without waiting for the actor on every request.
    private nonisolated let current: LockedCredential

    /// Creates a store.
    /// - Parameter credential: The initial credential, if any.
    public init(credential: Credential? = nil) { current = LockedCredential(credential) }

    /// The current credential.
    public func credential() async -> Credential? { current.value }

    /// Replaces the credential.
    /// - Parameter credential: The new credential.
    public func setCredential(_ credential: Credential?) async { current.value = credential }

    /// Stores `credential` if the current one is `expected`, atomically.
    /// - Parameters:
    ///   - expected: The credential the refresh replaced.
    ///   - credential: The new credential.
    /// - Returns: Whether it was stored.
    public func replaceCredential(_ expected: Credential?, with credential: Credential) async -> Bool {
        current.replace(expected, with: credential)
    }
}

extension InMemoryTokenStore: CredentialSnapshot {
    nonisolated var credentialNow: Credential? { current.value }
}

/// A store whose credential can be read at once, without waiting: the token layer reads it
/// so on every request, and enters its refresher only when there is none or it is expiring.
protocol CredentialSnapshot: Sendable {
    /// The credential the store holds now.
    var credentialNow: Credential? { get }
}

/// A credential behind a lock.
final class LockedCredential: @unchecked Sendable {
    private let lock = NSLock()
    private var credential: Credential?

    init(_ credential: Credential?) { self.credential = credential }

    var value: Credential? {
        get { lock.withLock { credential } }
        set { lock.withLock { credential = newValue } }
    }

    /// Stores `new` if the credential is `expected`, in one step; whether it did.
    func replace(_ expected: Credential?, with new: Credential) -> Bool {
        lock.withLock {
            guard credential == expected else { return false }
            credential = new
            return true
        }
    }
}
