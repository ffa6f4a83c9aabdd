import Foundation

/// What a login gives an app: the access token sent with each request, and optionally a
/// refresh token, the moment the access token expires, and who it belongs to.
///
/// With ``expiresAt`` set, the session refreshes the credential shortly *before* it expires
/// (``Session/Limits/refreshLeeway``), so no request is sent with a token the server is about to
/// refuse.
public struct Credential: Sendable, Hashable, Codable {
    /// The token sent with each request.
    public var accessToken: String
    /// The token the session's refresh sends to get a new access token, if the backend has one.
    public var refreshToken: String?
    /// When the access token expires, if the backend says.
    public var expiresAt: Date?
    /// Who the credential belongs to: the signed-in user's ID. The client's cache keeps each
    /// user's answers apart by it, so give the backend's user ID when it has one. When a login
    /// leaves it `nil`, the session sets a random one of its own, and a refresh or a silent
    /// login keeps it.
    public var userID: String?

    /// Creates a credential.
    /// - Parameters:
    ///   - accessToken: The token sent with each request.
    ///   - refreshToken: The token that gets a new access token, if any.
    ///   - expiresAt: When the access token expires, if known.
    ///   - userID: Who it belongs to, if the backend says.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil, userID: String? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.userID = userID
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
    /// which tokens it holds, when it expires and whose it is, never the tokens themselves.
    public var description: String {
        var parts = ["accessToken: <redacted>"]
        if refreshToken != nil { parts.append("refreshToken: <redacted>") }
        if let expiresAt { parts.append("expiresAt: \(expiresAt)") }
        if let userID { parts.append("userID: \(userID)") }
        return "Credential(" + parts.joined(separator: ", ") + ")"
    }

    /// The same redacted text as ``description``.
    public var debugDescription: String { description }

    /// What `dump(_:)` and debuggers show: the redacted ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["credential": description]) }
}
