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
public struct CachePolicy: Sendable, Hashable {
    enum Kind: Hashable {
        case networkOnly
        case cacheFirst(maxAge: Duration)
        case staleWhileRevalidate(maxAge: Duration)
        case offlineFallback
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
}

/// Where a ``Reply`` came from when it came from the cache.
public struct CacheInfo: Sendable, Hashable {
    /// When the answer was stored.
    public let storedAt: Date
    /// Whether it is older than its policy allows: an ``CachePolicy/offlineFallback`` answer, or
    /// a ``CachePolicy/staleWhileRevalidate(maxAge:)`` answer past its age.
    public let isStale: Bool
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
