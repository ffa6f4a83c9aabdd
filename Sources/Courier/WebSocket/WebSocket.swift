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
    /// default (100 milliseconds at least); `nil` for never. When two pings in a row go unanswered, the connection is
    /// declared dead and ``WebSocket/messages`` throws ``NetworkError/Code/timedOut``.
    public var pingInterval: Duration?
    /// How long ``WebSocket/close(code:reason:)`` waits for the server's close before it drops
    /// the connection, 5 seconds by default.
    public var closeTimeout: Duration

    /// Creates options.
    /// - Parameters:
    ///   - maximumMessageSize: The most bytes a message from the server may have.
    ///   - pingInterval: How often to ping the server; `nil` for never.
    ///   - closeTimeout: How long a close waits for the server's.
    public init(
        maximumMessageSize: Int = 16 * 1024 * 1024, pingInterval: Duration? = .seconds(30),
        closeTimeout: Duration = .seconds(5)
    ) {
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
/// throws ``NetworkError`` when the connection failed without one. A logout, a login as
/// someone else, or ``NetworkClient/cancelAll()`` closes the connection; so does cancelling the
/// task that reads ``messages``.
public final class WebSocket: Sendable {
    /// The subprotocol the server chose from those the endpoint offered, if any.
    public let subprotocol: String?
    /// The server's `101 Switching Protocols` answer to the handshake.
    public let response: HTTPResponse
    let link: any WebSocketLink
    /// Lets the client forget the connection.
    private let forget: @Sendable () -> Void

    init(link: any WebSocketLink, response: HTTPResponse, subprotocol: String?, forget: @escaping @Sendable () -> Void)
    {
        self.link = link
        self.response = response
        self.subprotocol = subprotocol
        self.forget = forget
    }

    /// A socket nobody holds (nor reads the messages of) can be neither used nor closed: it is
    /// closed now.
    deinit {
        link.abort(NetworkError(.cancelled, "The WebSocket was released while it was open."), code: .goingAway)
        forget()
    }

    /// The messages from the server, in order.
    public var messages: Messages { Messages(socket: self) }

    /// Sends a message. It returns once the message is handed to the connection.
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
    /// reason is cut to 123 bytes of UTF-8.
    /// - Parameters:
    ///   - code: Why the connection ends.
    ///   - reason: A few words for the server.
    public func close(code: WebSocketCloseCode = .normal, reason: String = "") async {
        await link.close(WebSocketClose(code: code, reason: reason))
    }

    /// The server's close, once the close handshake is complete; `nil` before, or when the
    /// connection ended without one.
    public var closeFrame: WebSocketClose? { link.closeFrame }

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
                try await socket.link.receive()
            }

            /// The next message, or `nil` after the close handshake.
            /// - Parameter actor: The caller's actor.
            /// - Throws: ``NetworkError``.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError)
                -> WebSocketMessage?
            {
                try await socket.link.receive()
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
