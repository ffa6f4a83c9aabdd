import Foundation

/// What happened to the user's session, for the app to react to: ``Session/events()``.
///
/// ```swift
/// Task {
///     for await event in session.events() where event == .sessionExpired { showLogin() }
/// }
/// ```
public enum SessionEvent: Sendable, Hashable {
    /// The app logged in (``Session/logIn(_:)``).
    case loggedIn
    /// The app logged out (``Session/logOut()``), or logged in as someone else, which logs out
    /// first.
    case loggedOut
    /// The backend asked for a new login (one of ``Session``'s log-in codes); the session is
    /// running its silent login. ``reLoginSucceeded`` or ``sessionExpired`` follows, or nothing
    /// when the app logged out meanwhile, the login was cancelled, could not reach the server,
    /// or its credential could not be stored.
    case reLoginNeeded
    /// The silent login succeeded; the requests that waited for it are sent again.
    case reLoginSucceeded
    /// The backend ended the session: an ask-the-user code, a silent login that failed or did
    /// not help, or none configured. Nobody is signed in any more: show the login screen.
    case sessionExpired
}

/// Broadcasts ``SessionEvent``s to any number of listeners.
///
/// `@unchecked Sendable`: `listeners` is guarded by `lock`.
final class SessionEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [UInt64: AsyncStream<SessionEvent>.Continuation] = [:]
    private var nextID: UInt64 = 0

    /// A new stream of the events from now on; it ends when the consumer stops iterating.
    func updates() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SessionEvent.self, bufferingPolicy: .bufferingNewest(32))
        let id = lock.withLock {
            nextID += 1
            listeners[nextID] = continuation
            return nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends an event to every listener.
    func send(_ event: SessionEvent) {
        for listener in lock.withLock({ Array(listeners.values) }) { listener.yield(event) }
    }
}
