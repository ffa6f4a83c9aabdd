import Foundation

/// What happened to the user's session, for the app to react to (an app's "go to login").
public enum SessionEvent: Sendable, Hashable {
    /// The backend asked for a new login (a re-login code or 401); Courier is running the
    /// app's re-login handler. ``reLoginSucceeded`` or ``sessionExpired`` follows, or nothing
    /// when the app logged out (``NetworkClient/cancelAll()``) meanwhile.
    case reLoginNeeded
    /// The re-login handler succeeded; waiting requests are replayed.
    case reLoginSucceeded
    /// Logging in again failed or did not help: show the login screen.
    case sessionExpired
}

/// Broadcasts ``SessionEvent``s to any number of listeners.
///
/// ```swift
/// let events = SessionEvents()
/// Task { for await event in events.updates() where event == .sessionExpired { showLogin() } }
/// ```
///
/// `@unchecked Sendable`: `listeners` is guarded by `lock`.
public final class SessionEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [UUID: AsyncStream<SessionEvent>.Continuation] = [:]

    /// Creates a broadcaster with no listener.
    public init() {}

    /// A new stream of the events from now on; it ends when the consumer stops iterating.
    /// - Returns: The stream.
    public func updates() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SessionEvent.self, bufferingPolicy: .bufferingNewest(32))
        let id = UUID()
        lock.withLock { listeners[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends an event to every listener.
    /// - Parameter event: The event.
    public func send(_ event: SessionEvent) {
        for listener in lock.withLock({ Array(listeners.values) }) { listener.yield(event) }
    }
}
