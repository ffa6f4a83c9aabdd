import Foundation

/// A message on a WebSocket: text or binary.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)
}

/// How a ``WebSocket`` behaves once open.
public struct WebSocketOptions: Sendable, Equatable {
    /// The most bytes a message from the server may have, 16 MiB by default. A larger one
    /// closes the connection with ``WebSocketCloseCode/messageTooBig`` and throws
    /// ``NetworkError/Code/responseTooLarge`` from ``WebSocket/messages``.
    public var maximumMessageSize: Int
    /// How often the client pings the server while the connection is open, 30 seconds by
    /// default (100 milliseconds at least); `nil` for never. When two pings in a row go
    /// unanswered, with nothing else from the server meanwhile, the connection is declared dead
    /// and ``WebSocket/messages`` throws ``NetworkError/Code/timedOut``. While the reader is
    /// behind (and the client does not read the connection), no ping counts as missed.
    public var pingInterval: Duration?
    /// How long ``WebSocket/close(code:reason:)`` waits for the server's close before it drops
    /// the connection, 5 seconds by default.
    public var closeTimeout: Duration
    /// When a connection that failed (dropped, or dead to pings) opens again: through the
    /// client's layers afresh (a new token, a new signature), after a randomised pause that
    /// grows with each failed attempt, once the network is back when the client has a
    /// reachability monitor. Never after a close handshake, ``WebSocket/close(code:reason:)``,
    /// a logout, ``NetworkClient/cancelAll()`` or a cancelled reader, nor after an answer that
    /// refuses the handshake. ``StreamOptions/Reconnection/never`` by default: a failure ends
    /// ``WebSocket/messages``. ``WebSocket/reconnections()`` tells each new connection.
    public var reconnection: StreamOptions.Reconnection

    /// Creates options.
    /// - Parameters:
    ///   - maximumMessageSize: The most bytes a message from the server may have.
    ///   - pingInterval: How often to ping the server; `nil` for never.
    ///   - closeTimeout: How long a close waits for the server's.
    ///   - reconnection: When a failed connection opens again.
    public init(
        maximumMessageSize: Int = 16 * 1024 * 1024, pingInterval: Duration? = .seconds(30),
        closeTimeout: Duration = .seconds(5), reconnection: StreamOptions.Reconnection = .never
    ) {
        self.reconnection = reconnection
        self.maximumMessageSize = max(0, maximumMessageSize)
        self.pingInterval = pingInterval.map { max($0, .milliseconds(100)) }
        self.closeTimeout = max(closeTimeout, .zero)
    }
}

/// An open WebSocket connection, made by ``NetworkClient/webSocket(_:options:)``: its handshake
/// went through the client's layers (token, signature, common parameters, a refresh or login
/// when the handshake was refused).
///
/// ```swift
/// let socket = try await client.webSocket(.webSocket("chat", query: ["room": "7"]))
/// try await socket.send(.text("hello"))
/// for try await message in socket.messages {
///     if case .text(let text) = message { print(text) }
/// }
/// ```
///
/// ``messages`` has one reader. It ends after a close handshake (``closeFrame`` says why) and
/// throws ``NetworkError`` when the connection failed without one, unless
/// ``WebSocketOptions/reconnection`` opens it again. A logout, a login as someone else, or
/// ``NetworkClient/cancelAll()`` closes the connection; so does cancelling the task that reads
/// ``messages``.
public final class WebSocket: Sendable {
    /// The connection now, and what ends the socket.
    private let state: Locked<State>
    private let options: WebSocketOptions
    /// Opens the endpoint again, through the layers, in the session epoch of the first.
    private let reopen: @Sendable () async throws(NetworkError) -> Connection
    /// The number of connections made, for ``reconnections()``.
    private let count = Broadcaster(1)
    /// Lets the client forget the socket.
    private let forget: Locked<(@Sendable () -> Void)?> = Locked(nil)

    /// One connection: the link, the handshake's answer and the subprotocol chosen.
    struct Connection: Sendable {
        let link: any WebSocketLink
        let response: HTTPResponse
        let subprotocol: String?
    }

    private struct State: Sendable {
        var connection: Connection
        var connectedAt = ContinuousClock.now
        var deliveredSinceConnect = false
        var attempts = 0
        /// Set once the socket ends for good: by the app's close, the session, `cancelAll()`.
        var stopped: NetworkError?
        var closing = false
        /// The number of the connection: 1 for the first.
        var number = 1
        /// The attempt under way to open again (its pause, the wait for the network, the
        /// handshake), which ``stop(_:code:)`` and ``close(code:reason:)`` cancel.
        var attempt: Task<Connection, any Error>?
    }

    init(
        first: Connection, options: WebSocketOptions,
        reopen: @escaping @Sendable () async throws(NetworkError) -> Connection
    ) {
        self.state = Locked(State(connection: first))
        self.options = options
        self.reopen = reopen
    }

    /// The client forgets the socket when it goes.
    func setForget(_ forget: @escaping @Sendable () -> Void) {
        self.forget.withLock { $0 = forget }
    }

    /// A socket nobody holds (nor reads the messages of) can be neither used nor closed: it is
    /// closed now.
    deinit {
        state.withLock { $0.connection.link }.abort(
            NetworkError(.cancelled, "The WebSocket was released while it was open."), code: .goingAway)
        forget.withLock { $0 }?()
        count.finish()
    }

    private var link: any WebSocketLink { state.withLock { $0.connection.link } }

    /// The subprotocol the server chose from those the endpoint offered, if any.
    public var subprotocol: String? { state.withLock { $0.connection.subprotocol } }
    /// The server's `101 Switching Protocols` answer to the handshake (of the connection now).
    public var response: HTTPResponse { state.withLock { $0.connection.response } }

    /// The messages from the server, in order.
    public var messages: Messages { Messages(socket: self) }

    /// The number of the connection each time one opens again (2 for the first reconnection,
    /// and so on), after the number of the one open now: a place to subscribe again to what
    /// the server forgot. Ends when the socket goes.
    /// - Returns: The stream.
    public func reconnections() -> AsyncStream<Int> { count.stream() }

    /// Sends a message on the connection open now. It returns once the message is handed to
    /// the connection.
    /// - Parameter message: The message.
    /// - Throws: ``NetworkError``: ``NetworkError/Code/cancelled`` (nothing of the message was
    ///   sent), or the error that ended the connection.
    public func send(_ message: WebSocketMessage) async throws(NetworkError) {
        try await link.send(message)
    }

    /// Pings the server and waits for its pong, until the connection ends or the task is
    /// cancelled.
    /// - Throws: ``NetworkError``: ``NetworkError/Code/cancelled``, or the error that ended the
    ///   connection.
    public func ping() async throws(NetworkError) {
        try await link.ping()
    }

    /// Closes the connection: sends a close with `code` and `reason` and waits, at most
    /// ``WebSocketOptions/closeTimeout``, for the server's. A code that may not be sent
    /// (``WebSocketCloseCode/isAllowedOnTheWire``) is sent as a close without a code; a
    /// reason is cut to 123 bytes of UTF-8. It does not open again.
    /// - Parameters:
    ///   - code: Why the connection ends.
    ///   - reason: A few words for the server.
    public func close(code: WebSocketCloseCode = .normal, reason: String = "") async {
        let (link, attempt) = state.withLock {
            $0.closing = true
            return ($0.connection.link, $0.attempt)
        }
        attempt?.cancel()
        count.finish()
        await link.close(WebSocketClose(code: code, reason: reason))
    }

    /// The server's close, once the close handshake is complete; `nil` before, or when the
    /// connection ended without one.
    public var closeFrame: WebSocketClose? { link.closeFrame }

    /// Ends the socket for good: the connection closes with `code`, nothing opens again, and
    /// the reader gets `error`.
    func stop(_ error: NetworkError, code: WebSocketCloseCode) {
        let (link, attempt) = state.withLock {
            if $0.stopped == nil { $0.stopped = error }
            return ($0.connection.link, $0.attempt)
        }
        attempt?.cancel()
        count.finish()
        link.abort(error, code: code)
    }

    /// The next message: from the connection open now, or, when it failed and the options say
    /// so, from the next one.
    func receive() async throws(NetworkError) -> WebSocketMessage? {
        while true {
            let link = self.link
            let result: Result<WebSocketMessage?, NetworkError> = await withTaskCancellationHandler {
                do throws(NetworkError) {
                    return .success(try await link.receive())
                } catch {
                    return .failure(error)
                }
            } onCancel: {
                stop(
                    NetworkError(.cancelled, "The task reading the WebSocket's messages was cancelled."),
                    code: .goingAway)
            }
            switch result {
            case .success(let message?):
                state.withLock { $0.deliveredSinceConnect = true }
                return message
            case .success(nil):
                count.finish()
                return nil
            case .failure(let failure):
                do throws(NetworkError) {
                    // `false`: the app closed the socket meanwhile; its messages end.
                    guard try await reconnect(after: failure) else {
                        count.finish()
                        return nil
                    }
                } catch {
                    count.finish()
                    throw error
                }
            }
        }
    }

    /// Opens the connection again after `failure`, when the options allow it and nothing ended
    /// the socket; else throws `failure` (or what ended the socket). Each attempt (its pause,
    /// the wait for the network, the handshake) is a task that ``stop(_:code:)`` and
    /// ``close(code:reason:)`` cancel.
    /// - Returns: `true` once a connection is open; `false` when the app closed the socket.
    private func reconnect(after failure: NetworkError) async throws(NetworkError) -> Bool {
        var failure = failure
        // Only a connection that was up long enough, or gave a message, starts the count again.
        state.withLock { state in
            let healthy = ContinuousClock.now - state.connectedAt >= options.reconnection.healthyAfter
            if state.deliveredSinceConnect || healthy { state.attempts = 0 }
            state.deliveredSinceConnect = false
        }
        while true {
            let number = state.withLock { state -> Int? in
                guard state.stopped == nil, !state.closing, Self.opensAgain(after: failure) else { return nil }
                state.attempts += 1
                if let limit = options.reconnection.maximumAttempts, state.attempts > limit { return nil }
                return state.attempts
            }
            guard let number else {
                let (stopped, closing) = state.withLock { ($0.stopped, $0.closing) }
                if let stopped { throw stopped }
                if closing { return false }
                throw failure
            }
            let delay = options.reconnection.delay(attempt: number, retry: nil) { .random(in: $0) }
            let reopen = self.reopen
            let attempt = Task { () async throws -> Connection in
                try await Task.sleep(for: delay)
                return try await reopen()
            }
            let ended = state.withLock { state -> Bool in
                state.attempt = attempt
                return state.stopped != nil || state.closing
            }
            if ended { attempt.cancel() }
            let result = await withTaskCancellationHandler {
                await attempt.result
            } onCancel: {
                attempt.cancel()
            }
            let outcome = state.withLock { state -> AttemptOutcome in
                state.attempt = nil
                if let stopped = state.stopped { return .stopped(stopped) }
                if state.closing { return .closedByApp }
                guard case .success(let next) = result else { return .failed }
                let previous = state.connection.link
                state.connection = next
                state.connectedAt = .now
                state.number += 1
                return .opened(state.number, previous: previous)
            }
            switch outcome {
            case .opened(let number, let previous):
                // The connection that failed is let go for good.
                previous.abort(NetworkError(.cancelled, "The WebSocket opened again."), code: .goingAway)
                count.update(number)
                return true
            case .closedByApp:
                if case .success(let next) = result { next.link.abort(Self.closedByApp, code: .normal) }
                return false
            case .stopped(let stopped):
                if case .success(let next) = result { next.link.abort(stopped, code: .goingAway) }
                throw stopped
            case .failed:
                break
            }
            guard case .failure(let error) = result else { continue }
            if Task.isCancelled || error is CancellationError {
                let cancelled = NetworkError(.cancelled, "The task reading the WebSocket's messages was cancelled.")
                stop(cancelled, code: .goingAway)
                throw cancelled
            }
            failure = NetworkError.wrapping(error)
        }
    }

    private static let closedByApp = NetworkError(.cancelled, "The WebSocket was closed by the app.")

    /// How an attempt to open again ended.
    private enum AttemptOutcome {
        case opened(Int, previous: any WebSocketLink)
        case closedByApp
        case stopped(NetworkError)
        case failed
    }

    /// Whether a connection that failed with `error` may open again: after a lost, broken or
    /// dead connection, the network gone, or a server that is busy or failing (`408`, `429`,
    /// `5xx`); not after a refusal (a `401` no refresh mended, another `4xx`, an answer that
    /// does not switch protocols) or a message past the limit.
    static func opensAgain(after error: NetworkError) -> Bool {
        switch error.code {
        case .transport, .timedOut, .offline: return error.status.map { $0 >= 500 } ?? true
        case .httpStatus: return error.status.map { $0 == 408 || $0 == 429 || $0 >= 500 } ?? false
        default: return false
        }
    }

    /// The messages of a ``WebSocket``.
    public struct Messages: AsyncSequence, Sendable {
        /// A message.
        public typealias Element = WebSocketMessage
        /// What reading throws.
        public typealias Failure = NetworkError

        /// The socket, kept open while its messages are read.
        let socket: WebSocket

        /// Makes the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(socket: socket) }

        /// Reads the messages.
        public struct Iterator: AsyncIteratorProtocol {
            let socket: WebSocket

            /// The next message, or `nil` after the close handshake.
            /// - Throws: ``NetworkError``.
            public mutating func next() async throws(NetworkError) -> WebSocketMessage? {
                try await socket.receive()
            }

            /// The next message, or `nil` after the close handshake.
            /// - Parameter actor: The caller's actor.
            /// - Throws: ``NetworkError``.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError)
                -> WebSocketMessage?
            {
                try await socket.receive()
            }
        }
    }
}

/// What a platform's connection gives a ``WebSocket``.
protocol WebSocketLink: Sendable {
    /// Sends a message; returns once it is handed to the connection.
    func send(_ message: WebSocketMessage) async throws(NetworkError)
    /// The next message; `nil` after the close handshake.
    func receive() async throws(NetworkError) -> WebSocketMessage?
    /// Pings and waits for the pong.
    func ping() async throws(NetworkError)
    /// Closes with a close handshake.
    func close(_ close: WebSocketClose) async
    /// Ends the connection now: a close with `code` is sent if it can be, and every waiter and
    /// later call throws `error`.
    func abort(_ error: NetworkError, code: WebSocketCloseCode)
    /// The server's close, once the close handshake is complete.
    var closeFrame: WebSocketClose? { get }
    /// Runs `action` once the connection has ended and let its resources go (at once if it has).
    func whenEnded(_ action: @escaping @Sendable () -> Void)
}
