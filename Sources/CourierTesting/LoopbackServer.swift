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
///     server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
///     let client = NetworkClient(configuration: .init(baseURL: server.baseURL.appending(path: "v1/")))
///     let orders = try await client.send(Endpoint<[Order]>.get("orders"))
///     #expect(orders.count == 1 && server.requests.count == 1)
/// }
/// ```
///
/// Bad input never harms the process that hosts the server: a malformed request (a negative
/// or overflowing length, a head over 64 KB, ambiguous framing) gets a `400` (or `413`, `431`,
/// `501`) and the connection is closed, and at most ``maximumConnections`` connections are
/// served at once (more get a `503`). Releasing the server stops it.
public final class LoopbackServer: Sendable {
    /// A route: gets the request, returns the answer.
    public typealias Handler = @Sendable (Request) async throws -> Response

    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    /// The most connections served at once; more are answered `503` and closed.
    public static let maximumConnections = 512

    private let core: Core

    /// Starts a server on 127.0.0.1 with a port the system picks.
    /// - Throws: `POSIXError` when the socket cannot be opened.
    public convenience init() throws { try self.init(routesOnConnectionThreads: true) }

    /// Starts a server whose routes run on their connections' threads, or (`false`, as on
    /// systems before iOS 18 and macOS 15) in tasks of Swift's shared pool.
    package init(routesOnConnectionThreads: Bool) throws {
        let listener = try Listener()
        port = listener.port
        core = Core(listener: listener, routesOnConnectionThreads: routesOnConnectionThreads)
        let core = self.core
        Thread.detachNewThread { core.acceptLoop() }
    }

    deinit { core.stop() }

    /// Adds a route, replacing any earlier route for the same method and path. The first route
    /// whose method and path match answers; an unmatched request gets `404`.
    /// - Parameters:
    ///   - path: The percent-encoded path to match exactly, with or without the leading `/`.
    ///   - method: The method to match, or `nil` for any.
    ///   - handler: Produces the answer; a thrown error becomes a `500`.
    public func route(_ path: String, method: HTTPMethod? = nil, handler: @escaping Handler) {
        core.route(path.hasPrefix("/") ? path : "/" + path, method: method, handler: handler)
    }

    /// Every request received so far, in order of arrival.
    public var requests: [Request] { core.log.requests }

    /// Whether the server records its requests and events for ``requests``, ``events`` and
    /// ``waitForEvents(timeout:_:)``; on unless turned off. Turn it off for a benchmark or a
    /// soak: the record keeps every request, so it grows with each one (about 2 KB). Change it
    /// while no request is in flight, or a request's events are recorded in part. While it is
    /// off, `waitForEvents` sees no new event and waits out its timeout.
    public var isRecording: Bool {
        get { core.log.isRecording }
        set { core.log.isRecording = newValue }
    }

    /// Everything that happened so far, in order.
    public var events: [Event] { core.log.events }

    /// Waits until the recorded events satisfy `predicate`, or the timeout passes.
    /// - Parameters:
    ///   - timeout: How long to wait at most: 30 seconds by default, a bound on a wait that
    ///     should end well before it even on a busy machine (a test suite's first seconds can
    ///     hold a wake-up for several).
    ///   - predicate: A test on all events so far.
    /// - Returns: Whether the predicate became true in time.
    public func waitForEvents(timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable ([Event]) -> Bool)
        async -> Bool
    {
        await core.waiters.wait(timeout: timeout, predicate)
    }

    /// Stops listening and closes every connection. Safe to call more than once; also done
    /// when the server is released.
    ///
    /// Sockets are shut down here but closed only by the threads that own them, so a number
    /// the system hands out again (to another server's socket) is never touched.
    public func stop() { core.stop() }
}

extension LoopbackServer {
    /// The state a server's threads share, so the server object itself can be released
    /// (which stops it).
    ///
    /// `@unchecked Sendable`: `routes` is guarded by `lock`.
    final class Core: @unchecked Sendable {
        let acceptor: Acceptor
        let log = Log()
        let waiters: Waiters<[Event]>
        private let lock = NSLock()
        private var routes: [(method: HTTPMethod?, path: String, handler: Handler)] = []

        /// Whether routes run on their connections' threads (see `respond(to:)`).
        let routesOnConnectionThreads: Bool

        init(listener: Listener, routesOnConnectionThreads: Bool) {
            acceptor = Acceptor(listener)
            self.routesOnConnectionThreads = routesOnConnectionThreads
            waiters = Waiters { [log] in log.events }
        }

        func route(_ path: String, method: HTTPMethod?, handler: @escaping Handler) {
            lock.withLock {
                routes.removeAll { $0.method == method && $0.path == path }
                routes.append((method, path, handler))
            }
        }

        func handler(for request: Request) -> Handler? {
            lock.withLock {
                routes.first { route in
                    (route.method == nil || route.method == request.method) && route.path == request.path
                }?.handler
            }
        }

        func record(_ event: Event, request: Request? = nil) {
            if log.record(event, request: request) { waiters.resolve() }
        }

        func stop() {
            if acceptor.stop() { waiters.close() }
        }

        /// Accepts connections until stopped, each served on a thread of its own; one past
        /// ``LoopbackServer/maximumConnections`` is answered 503.
        func acceptLoop() {
            acceptor.run(
                limit: LoopbackServer.maximumConnections,
                refuse: { client in _ = Sockets.write(client, Array(Self.busyAnswer.utf8)) },
                admit: { client in
                    record(.connected)
                    return Acceptor.Service(serve: { [self] in
                        var connection = Connection(socket: client, core: self)
                        connection.run()
                    })
                })
        }

        private static let busyAnswer =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    }

    /// The requests and events a server recorded.
    ///
    /// `@unchecked Sendable`: `requests`, `events` and `recording` are guarded by `lock`.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var recordedRequests: [Request] = []
        private var recordedEvents: [Event] = []
        private var recording = true

        var requests: [Request] { lock.withLock { recordedRequests } }
        var events: [Event] { lock.withLock { recordedEvents } }
        var isRecording: Bool {
            get { lock.withLock { recording } }
            set { lock.withLock { recording = newValue } }
        }

        /// Records an event, unless recording is off; returns whether it did.
        func record(_ event: Event, request: Request?) -> Bool {
            lock.withLock {
                guard recording else { return false }
                recordedEvents.append(event)
                if let request { recordedRequests.append(request) }
                return true
            }
        }
    }
}
