import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The accepting side the two test servers share: a ``Listener``, the connections open on it,
/// and a stop that wakes the accepting thread and shuts every connection down. Each connection
/// is served on a thread of its own, which closes it.
///
/// Sockets are shut down by ``stop()`` but closed only by the threads that own them, so a
/// number the system hands out again (to another server's socket) is never touched.
///
/// `@unchecked Sendable`: `openSockets` and `stopped` are guarded by `lock`.
final class Acceptor: @unchecked Sendable {
    /// How one accepted connection is served: `serve` on the connection's own thread; then the
    /// socket is closed, and `closed` runs.
    struct Service: Sendable {
        var serve: @Sendable () -> Void
        var closed: @Sendable () -> Void = {}
    }

    let listener: Listener
    private let lock = NSLock()
    private var openSockets: Set<Int32> = []
    private var stopped = false

    init(_ listener: Listener) { self.listener = listener }

    /// Whether ``stop()`` has run.
    var isStopped: Bool { lock.withLock { stopped } }

    /// Stops listening and shuts every open connection down.
    /// - Returns: Whether this call stopped it (`false` when it was stopped already).
    @discardableResult
    func stop() -> Bool {
        lock.withLock {
            guard !stopped else { return false }
            stopped = true
            listener.stop()
            for socket in openSockets { shutdown(socket, Int32(SHUT_RDWR)) }
            return true
        }
    }

    /// Accepts connections on the calling thread until ``stop()``.
    /// - Parameters:
    ///   - limit: The most connections open at once; one past it is handed to `refuse`, then
    ///     closed.
    ///   - refuse: Answers a connection past the limit.
    ///   - admit: Called on this thread for each connection, in the order they came: what
    ///     serves it.
    func run(
        limit: Int = .max, refuse: (Int32) -> Void = { _ in }, admit: (Int32) -> Service
    ) {
        enum Admission { case stop, retry, busy, serve }
        while true {
            let client = listener.accept()
            let admission: Admission = lock.withLock {
                guard !stopped else { return .stop }
                guard client >= 0 else { return .retry }
                guard openSockets.count < limit else { return .busy }
                openSockets.insert(client)
                return .serve
            }
            switch admission {
            case .stop:
                if client >= 0 { close(client) }
                // Closed here, by the only thread that uses it, once `stop()` has woken it.
                listener.close()
                return
            case .retry:  // EINTR, ECONNABORTED, …: keep listening
                Sockets.pauseIfOutOfDescriptors()
                continue
            case .busy:
                refuse(client)
                close(client)
                continue
            case .serve:
                break
            }
            Sockets.setNoDelay(client)
            let service = admit(client)
            Thread.detachNewThread { [self] in
                service.serve()
                lock.withLock { _ = openSockets.remove(client) }
                close(client)
                service.closed()
            }
        }
    }
}
