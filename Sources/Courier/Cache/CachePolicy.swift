import Foundation

/// How an endpoint uses the client's ``ResponseCache``: never, before the network, or when the
/// network fails.
///
/// ```swift
/// extension Endpoint where Response == [Order] {
///     static func orders(page: Int) -> Self {
///         Endpoint.get("orders", query: ["page": "\(page)"]).caching(.cacheFirst(maxAge: .seconds(60)))
///     }
/// }
/// ```
///
/// A policy other than ``networkOnly`` needs a cache in the client's configuration
/// (``NetworkClient/Configuration/cache``); without one every endpoint uses the network only.
/// Only answers that decoded into the endpoint's type are stored: for an envelope, a business
/// success. Only `GET`, `HEAD` and idempotent `POST` endpoints use the cache (see
/// ``ResponseCache``); downloads and multipart or file bodies never do.
///
/// Whatever the policy, a stored answer that carries an `ETag` or a `Last-Modified` is
/// revalidated rather than fetched again when the network is asked: a `GET` or `HEAD` goes out
/// with `If-None-Match` or `If-Modified-Since`, and a `304 Not Modified` refreshes the stored
/// answer (its headers, and its age from now) and returns it, without a body on the wire. An
/// endpoint that sets either header itself is sent as it is.
public struct CachePolicy: Sendable, Hashable {
    enum Kind: Hashable {
        case networkOnly
        case cacheFirst(maxAge: Duration)
        case staleWhileRevalidate(maxAge: Duration)
        case offlineFallback
        case http
    }

    let kind: Kind

    /// The network, always; nothing is read from or written to the cache. The default.
    public static let networkOnly = CachePolicy(kind: .networkOnly)

    /// A stored answer younger than `maxAge` is returned without touching the network; otherwise
    /// the network answers, and its answer is stored.
    /// - Parameter maxAge: How long a stored answer is used without asking again.
    /// - Returns: The policy.
    public static func cacheFirst(maxAge: Duration) -> CachePolicy { CachePolicy(kind: .cacheFirst(maxAge: maxAge)) }

    /// A stored answer younger than `maxAge` is returned without touching the network; an older
    /// one is returned at once, marked stale (``CacheInfo/isStale``), while a request in the
    /// background refreshes it for the next call. Without a stored answer the network answers.
    /// - Parameter maxAge: How long a stored answer counts as fresh.
    /// - Returns: The policy.
    public static func staleWhileRevalidate(maxAge: Duration) -> CachePolicy {
        CachePolicy(kind: .staleWhileRevalidate(maxAge: maxAge))
    }

    /// The network first, and its answer is stored; when the device is offline
    /// (``NetworkError/Code/offline``), the connection fails (``NetworkError/Code/transport``) or
    /// the deadline passes (``NetworkError/Code/timedOut``), also while fetching a token, the
    /// stored answer, however old, is returned instead, marked stale. Without one the error is
    /// thrown. An error status (a 503, say) is the server's answer, and is thrown.
    public static let offlineFallback = CachePolicy(kind: .offlineFallback)

    /// As the server's headers say, the way a browser keeps answers for one user: a stored
    /// answer is returned without touching the network while it is fresh (`Cache-Control:
    /// max-age`, or `Expires` against `Date`, less any `Age`); after that it is revalidated
    /// (see the note above) and the network's answer, or the stored one confirmed by a `304`,
    /// is returned. `no-cache`, a lifetime that cannot be read, or none at all, revalidates
    /// before every use; `no-store` stores nothing. No lifetime is guessed from `Last-Modified`.
    public static let http = CachePolicy(kind: .http)
}

/// Where a ``Reply`` came from when it came from the cache.
public struct CacheInfo: Sendable, Hashable {
    /// When the answer was stored.
    public let storedAt: Date
    /// Whether it is older than its policy allows: an ``CachePolicy/offlineFallback`` answer, a
    /// ``CachePolicy/staleWhileRevalidate(maxAge:)`` answer past its age, or the first answer of
    /// ``NetworkClient/updates(for:)`` when it is past its age (always, for an endpoint that uses
    /// the network only or falls back when offline).
    public let isStale: Bool
    /// Whether the server confirmed it just now, with a `304 Not Modified`: the network was
    /// asked, and the stored answer still holds. `false` for an answer given without the
    /// network.
    public let isRevalidated: Bool

    init(storedAt: Date, isStale: Bool, isRevalidated: Bool = false) {
        self.storedAt = storedAt
        self.isStale = isStale
        self.isRevalidated = isRevalidated
    }
}

extension Endpoint {
    /// A copy that uses the client's cache as `policy` says.
    /// - Parameter policy: The cache policy.
    /// - Returns: The changed endpoint.
    public func caching(_ policy: CachePolicy) -> Self {
        var copy = self
        copy.cachePolicy = policy
        return copy
    }
}
