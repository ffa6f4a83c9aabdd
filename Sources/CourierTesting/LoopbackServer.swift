import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real HTTP/1.1 server on 127.0.0.1 with a port the system picks, for tests and demos.
///
/// It speaks keep-alive, reads `Content-Length` and chunked bodies, answers `Expect:
/// 100-continue`, runs routes as async closures, records every request and event, and can act
/// out faults (delay, drip, hang up mid-body, hang up before answering). Each connection has its
/// own thread, so it carries hundreds of concurrent connections.
///
/// ```swift
/// @Test func ordersDecode() async throws {
///     let server = try LoopbackServer()
///     defer { server.stop() }
///     server.route("/v1/orders") { request in
///         .envelope(data: [["id": 1]])
///     }
///     let client = NetworkClient(configuration: .init(baseURL: server.baseURL.appending(path: "v1")))
///     let orders = try await client.send(Endpoint<[Order]>.get("orders"))
///     #expect(server.requests.count == 1)
/// }
/// ```
///
/// `@unchecked Sendable`: mutable state (routes, records, waiters, open sockets) is guarded by `lock`.
public final class LoopbackServer: @unchecked Sendable {
    /// A route: gets the request, returns the answer.
    public typealias Handler = @Sendable (Request) async throws -> Response

    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    private let listener: Int32
    private let lock = NSLock()
    private var routes: [(method: String?, path: String, handler: Handler)] = []
    private var recordedRequests: [Request] = []
    private var recordedEvents: [Event] = []
    private var waiters: [UUID: Waiter] = [:]
    private var openSockets: Set<Int32> = []
    private var stopped = false

    /// Starts a server on 127.0.0.1 with a port the system picks.
    /// - Throws: `POSIXError` when the socket cannot be opened.
    public init() throws {
        let fd = socket(AF_INET, Int32(streamSocketType), 0)
        guard fd >= 0 else { throw POSIXError.current() }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 1024) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            let error = POSIXError.current()
            close(fd)
            throw error
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Adds a route, replacing any earlier route for the same method and path. The first route
    /// whose method and path match answers; an unmatched request gets `404`.
    /// - Parameters:
    ///   - path: The percent-encoded path to match exactly, with or without the leading `/`.
    ///   - method: The method to match, or `nil` for any.
    ///   - handler: Produces the answer; a thrown error becomes a `500`.
    public func route(_ path: String, method: HTTPMethod? = nil, handler: @escaping Handler) {
        let normalized = path.hasPrefix("/") ? path : "/" + path
        lock.withLock {
            routes.removeAll { $0.method == method?.rawValue && $0.path == normalized }
            routes.append((method?.rawValue, normalized, handler))
        }
    }

    /// Every request received so far, in order of arrival.
    public var requests: [Request] { lock.withLock { recordedRequests } }

    /// Everything that happened so far, in order.
    public var events: [Event] { lock.withLock { recordedEvents } }

    /// Waits until the recorded events satisfy `predicate`, or the timeout passes.
    /// - Parameters:
    ///   - timeout: How long to wait at most.
    ///   - predicate: A test on all events so far.
    /// - Returns: Whether the predicate became true in time.
    public func waitForEvents(timeout: Duration = .seconds(5), _ predicate: @escaping @Sendable ([Event]) -> Bool)
        async -> Bool
    {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let registered = lock.withLock {
                guard !stopped else { return false }
                waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return true
            }
            guard registered else {
                continuation.resume(returning: predicate(events))
                return
            }
            resolveWaiters(timedOut: nil)
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.resolveWaiters(timedOut: id)
            }
        }
    }

    /// Stops listening and closes every connection. Safe to call more than once.
    ///
    /// Sockets are shut down here but closed only by the threads that own them, so a number
    /// the system hands out again (to another server's socket) is never touched.
    public func stop() {
        let pending: [CheckedContinuation<Bool, Never>] = lock.withLock {
            guard !stopped else { return [] }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for socket in openSockets { shutdown(socket, Int32(SHUT_RDWR)) }
            defer { waiters.removeAll() }
            return waiters.values.map(\.continuation)
        }
        for continuation in pending { continuation.resume(returning: false) }
    }

    // MARK: - Internals used by connections

    func record(_ event: Event, request: Request? = nil) {
        lock.lock()
        recordedEvents.append(event)
        if let request { recordedRequests.append(request) }
        lock.unlock()
        resolveWaiters(timedOut: nil)
    }

    /// Resumes waiters whose predicate holds with `true`, and the one whose time ran out with
    /// `false`. Predicates run outside the lock, so they may read ``requests`` and ``events``.
    private func resolveWaiters(timedOut: UUID?) {
        let (snapshot, candidates) = lock.withLock { (recordedEvents, waiters) }
        var decided: [(UUID, Bool)] = []
        for (id, waiter) in candidates {
            let satisfied = waiter.predicate(snapshot)
            if satisfied || id == timedOut { decided.append((id, satisfied)) }
        }
        let ready = lock.withLock {
            decided.compactMap { id, satisfied in waiters.removeValue(forKey: id).map { ($0.continuation, satisfied) } }
        }
        for (continuation, result) in ready { continuation.resume(returning: result) }
    }

    private struct Waiter {
        let predicate: @Sendable ([Event]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    func handler(for request: Request) -> Handler? {
        lock.withLock {
            routes.first { route in
                (route.method == nil || route.method == request.method) && route.path == request.path
            }?.handler
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            let accepted = lock.withLock {
                guard !stopped else { return false }
                if client >= 0 { openSockets.insert(client) }
                return true
            }
            guard accepted else {
                if client >= 0 { close(client) }
                // Closed here, by the only thread that uses it, once `stop()` has shut it down.
                lock.withLock { _ = close(listener) }
                return
            }
            guard client >= 0 else { continue }  // EINTR, ECONNABORTED, …: keep listening
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            record(.connected)
            Thread.detachNewThread { [self] in
                var connection = Connection(socket: client, server: self)
                connection.run()
                lock.withLock { _ = openSockets.remove(client) }
                close(client)
            }
        }
    }
}

#if canImport(Glibc)
    private let streamSocketType = SOCK_STREAM.rawValue
#else
    private let streamSocketType = SOCK_STREAM
#endif

extension POSIXError {
    /// The error for the current `errno`.
    static func current() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
