import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A raw TCP server on 127.0.0.1 that acts out a script of bytes, pauses and hang-ups on each
/// connection, to test how client code copes with broken and hostile servers.
///
/// Where ``LoopbackServer`` answers well-formed requests with well-formed answers, a
/// `FaultServer` sends exactly the bytes you script, when you script them: a `Content-Length`
/// that lies, an endless header, a body that trickles, a connection reset in the middle of
/// the head. It records every connection, every request head and every byte it receives, so a
/// test can check, for example, that a `POST` reached the server exactly once.
///
/// ```swift
/// @Test func truncatedBodyIsAnError() async throws {
///     let server = try FaultServer([
///         .readRequest,
///         .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part"),
///         .close,
///     ])
///     defer { server.stop() }
///     let client = NetworkClient(configuration: .init(baseURL: server.baseURL))
///     await #expect(throws: NetworkError.self) { try await client.send(Endpoint<Data>.get("x", decoding: .data)) }
///     #expect(server.requestHeads.count == 1)
/// }
/// ```
///
/// Each connection runs its script on a thread of its own. While a step waits (a pause, a
/// trickle, a read), the server reads whatever the client sends and records it. When the
/// script ends without closing, the server keeps reading until the client hangs up.
public final class FaultServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    private let core: Core

    /// Starts a server whose connections each run the script `script(n)` returns for
    /// connection `n` (0 for the first).
    /// - Parameter script: The steps for each connection, by its number.
    /// - Throws: `POSIXError` when the socket cannot be opened.
    public init(script: @escaping @Sendable (_ connection: Int) -> [Step]) throws {
        let listener = try Listener()
        let port = listener.port
        self.port = port
        core = Core(listener: listener, script: script)
        let core = self.core
        Thread.detachNewThread { core.acceptLoop() }
    }

    /// Starts a server whose every connection runs the same steps.
    /// - Parameter steps: The steps.
    /// - Throws: `POSIXError` when the socket cannot be opened.
    public convenience init(_ steps: [Step]) throws {
        try self.init { _ in steps }
    }

    deinit { core.stop() }

    /// Every connection so far, in the order they were accepted.
    public var connections: [ConnectionRecord] { core.activity.connections }

    /// Every request head received so far, on any connection, in order of arrival.
    public var requestHeads: [RequestHead] { core.activity.requestHeads }

    /// Waits until what the server has seen satisfies `predicate`, or the timeout passes.
    /// - Parameters:
    ///   - timeout: How long to wait at most: 30 seconds by default, a bound on a wait that
    ///     should end well before it even on a busy machine (a test suite's first seconds can
    ///     hold a wake-up for several).
    ///   - predicate: A test on everything seen so far.
    /// - Returns: Whether the predicate became true in time.
    public func waitUntil(timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable (Activity) -> Bool)
        async -> Bool
    {
        await core.waiters.wait(timeout: timeout, predicate)
    }

    /// Stops listening and ends every connection. Safe to call more than once; also done
    /// when the server is released.
    public func stop() { core.stop() }
}

extension FaultServer {
    /// Everything a ``FaultServer`` has seen.
    public struct Activity: Sendable {
        /// Every connection, in the order accepted.
        public var connections: [ConnectionRecord]
        /// Every request head, in order of arrival.
        public var requestHeads: [RequestHead]
    }

    /// A request head as the server received it.
    public struct RequestHead: Sendable, Hashable {
        /// The number of the connection it came on.
        public var connection: Int
        /// The method.
        public var method: HTTPMethod
        /// The request target exactly as sent.
        public var target: String
        /// The header fields in the order sent.
        public var headers: HTTPHeaders
    }

    /// One connection as the server saw it.
    public struct ConnectionRecord: Sendable {
        /// Its number: 0 for the first connection.
        public var index: Int
        /// The first ``receivedLimit`` bytes the client sent.
        public var received: Data
        /// How many bytes the client sent in all.
        public var receivedByteCount: Int64
        /// How many request heads arrived on it.
        public var requestCount: Int
        /// How many requests (head and body) arrived whole on it.
        public var completeRequestCount: Int
        /// Whether the client hung up (rather than the server closing first).
        public var closedByClient: Bool
        /// Whether the connection is over.
        public var isClosed: Bool
        /// When the server accepted it.
        public var openedAt: ContinuousClock.Instant
    }

    /// How many received bytes a ``ConnectionRecord`` keeps.
    public static let receivedLimit = 4 << 20
}

extension FaultServer {
    /// The shared state of a server, owned by its threads, so the server object itself can be
    /// released (which stops it).
    final class Core: Sendable {
        let acceptor: Acceptor
        let script: @Sendable (Int) -> [Step]
        let log = Log()
        let waiters: Waiters<Activity>

        init(listener: Listener, script: @escaping @Sendable (Int) -> [Step]) {
            acceptor = Acceptor(listener)
            self.script = script
            waiters = Waiters { [log] in log.activity }
        }

        var activity: Activity { log.activity }

        var isStopped: Bool { acceptor.isStopped }

        func stop() {
            if acceptor.stop() { waiters.close() }
        }

        /// Accepts connections until stopped, each numbered in the order it came and played its
        /// script on a thread of its own.
        func acceptLoop() {
            acceptor.run { client in
                let index = log.opened()
                waiters.resolve()
                return Acceptor.Service(
                    serve: { [self] in
                        var connection = ScriptedConnection(socket: client, index: index, core: self)
                        connection.run(script(index))
                    },
                    closed: { [log, waiters] in
                        log.update(index) { $0.isClosed = true }
                        waiters.resolve()
                    })
            }
        }
    }

    /// The records of a server's connections.
    ///
    /// `@unchecked Sendable`: `records` and `heads` are guarded by `lock`.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var records: [ConnectionRecord] = []
        private var heads: [RequestHead] = []

        var activity: Activity { lock.withLock { Activity(connections: records, requestHeads: heads) } }

        /// Records a new connection and returns its number.
        func opened() -> Int {
            lock.withLock {
                records.append(
                    ConnectionRecord(
                        index: records.count, received: Data(), receivedByteCount: 0, requestCount: 0,
                        completeRequestCount: 0, closedByClient: false, isClosed: false, openedAt: .now))
                return records.count - 1
            }
        }

        func update(_ index: Int, _ change: (inout ConnectionRecord) -> Void) {
            lock.withLock { change(&records[index]) }
        }

        func received(_ bytes: ArraySlice<UInt8>, on index: Int) {
            update(index) { record in
                let room = FaultServer.receivedLimit - record.received.count
                if room > 0 { record.received.append(contentsOf: bytes.prefix(room)) }
                record.receivedByteCount += Int64(bytes.count)
            }
        }

        func receivedHead(_ head: RequestParser.Head, on index: Int) {
            lock.withLock {
                records[index].requestCount += 1
                heads.append(
                    RequestHead(
                        connection: index, method: HTTPMethod(head.method), target: head.target, headers: head.headers))
            }
        }
    }
}
