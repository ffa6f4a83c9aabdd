import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LoopbackServer {
    /// What a route that accepts WebSockets runs (see ``Response/webSocket(subprotocol:headers:_:)``).
    struct WebSocketRoute: Sendable {
        let subprotocol: String?
        let session: @Sendable (WebSocketConnection) async -> Void
    }

    /// The server's side of a WebSocket a route accepted: it reads the client's frames (checked
    /// as a server must: masked, within the protocol) and writes its own, unmasked. Pings are
    /// answered and a close is answered with the same code unless told otherwise. For faults,
    /// ``sendRaw(_:)`` writes any bytes.
    ///
    /// Reading blocks the route's connection thread, which is the route's own: read from the
    /// route's session itself, not from a task it starts. Once the route returns, the
    /// connection is closed and the object reads and writes nothing.
    ///
    /// `@unchecked Sendable`: the reading state is used by the route's session alone; writes are
    /// serialised by `lock`.
    public final class WebSocketConnection: @unchecked Sendable {
        /// What the client sent.
        public enum Event: Sendable, Equatable {
            /// A whole message.
            case message(WebSocketMessage)
            /// A ping (already answered, unless ``answersPings`` is off).
            case ping(Data)
            /// A pong.
            case pong(Data)
            /// A close: its code (`WebSocketCloseCode.noStatus` when it had none) and reason.
            case close(WebSocketClose)
            /// The client broke the protocol; the close code the server should answer with.
            case protocolError(WebSocketCloseCode)
            /// The connection ended without a close.
            case disconnected
            /// Nothing came within the time allowed.
            case timedOut
        }

        /// The handshake's request, with the token and parameters the layers added.
        public let request: Request
        /// Whether pings are answered with pongs (on by default): off, the client's keep-alive
        /// finds no answer.
        public var answersPings: Bool {
            get { lock.withLock { pongs } }
            set { lock.withLock { pongs = newValue } }
        }

        private let socket: Int32
        private let lock = NSLock()
        private var pongs = true
        private var closeSent = false
        /// Set when the route returned and the server closed the socket: its descriptor may be
        /// another's by now, so nothing is read or written on it.
        private var ended = false
        private var reader = WebSocketFrameReader(expectsMasked: true, maximumPayload: 1 << 26)
        private var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 26)
        private var pending: [Event] = []
        private var unread: [UInt8]

        init(socket: Int32, request: Request, unread: [UInt8]) {
            self.socket = socket
            self.request = request
            self.unread = unread
        }

        /// The next thing the client sent, waiting for it at most `timeout`.
        /// - Parameter timeout: How long to wait.
        /// - Returns: The event.
        public func receive(timeout: Duration = .seconds(10)) async -> Event {
            // The wait blocks a thread of its own, never one of Swift's pool, which every other
            // task of the process shares (a route may run there: see `Connection.run(_:)`).
            await withCheckedContinuation { continuation in
                Thread { [self] in continuation.resume(returning: waitForEvent(timeout: timeout)) }.start()
            }
        }

        /// ``receive(timeout:)``'s blocking wait.
        private func waitForEvent(timeout: Duration) -> Event {
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while pending.isEmpty {
                if lock.withLock({ ended }) { return .disconnected }
                if !unread.isEmpty {
                    take(unread)
                    unread = []
                    continue
                }
                let left = deadline - .now
                guard left > .zero else { return .timedOut }
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(clamping: left.components.seconds * 1000 + 1)
                guard poll(&descriptor, 1, min(milliseconds, 100)) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return .disconnected }
                take(buffer[..<count])
            }
            return pending.removeFirst()
        }

        private func take(_ bytes: some Sequence<UInt8>) {
            reader.append(bytes)
            do throws(WebSocketProtocolError) {
                while let frame = try reader.next() {
                    guard let event = try assembler.receive(frame) else { continue }
                    switch event {
                    case .text(let text): pending.append(.message(.text(text)))
                    case .binary(let data): pending.append(.message(.binary(data)))
                    case .ping(let payload):
                        if answersPings { _ = write(WebSocketFrame(.pong, payload)) }
                        pending.append(.ping(payload))
                    case .pong(let payload): pending.append(.pong(payload))
                    case .close(let close):
                        _ = self.close(code: close.code, reason: close.reason)
                        pending.append(.close(close))
                    }
                }
            } catch {
                pending.append(.protocolError(error.closeCode))
            }
        }

        private func write(_ frame: WebSocketFrame) -> Bool {
            sendRaw(frame.encoded(maskingKey: nil))
        }

        /// Sends a message.
        /// - Parameter message: The message.
        /// - Returns: Whether it was sent (`false` once the client hung up).
        @discardableResult
        public func send(_ message: WebSocketMessage) -> Bool {
            switch message {
            case .text(let text): write(WebSocketFrame(.text, Data(text.utf8)))
            case .binary(let data): write(WebSocketFrame(.binary, data))
            }
        }

        /// Sends a ping.
        /// - Parameter payload: Its payload, 125 bytes at most.
        /// - Returns: Whether it was sent.
        @discardableResult
        public func ping(_ payload: Data = Data()) -> Bool {
            write(WebSocketFrame(.ping, payload.prefix(125)))
        }

        /// Sends a close, once: later calls send nothing. A code that may not be sent
        /// (`WebSocketCloseCode.noStatus`, say) sends a close without a code.
        /// - Parameters:
        ///   - code: The code.
        ///   - reason: The reason.
        /// - Returns: Whether it was sent.
        @discardableResult
        public func close(code: WebSocketCloseCode = .normal, reason: String = "") -> Bool {
            let first = lock.withLock {
                defer { closeSent = true }
                return !closeSent
            }
            guard first else { return false }
            return write(WebSocketFrame(.close, WebSocketClose(code: code, reason: reason).payload))
        }

        /// Writes bytes as they are: a frame cut short, a masked frame, a wrong length.
        /// - Parameter bytes: The bytes.
        /// - Returns: Whether they were sent.
        @discardableResult
        public func sendRaw(_ bytes: Data) -> Bool {
            lock.withLock { !ended && Sockets.write(socket, bytes) }
        }

        /// The route returned: the server closes the socket next.
        func end() {
            lock.withLock { ended = true }
        }
    }
}

extension LoopbackServer.Response {
    /// Accepts a WebSocket: the server answers `101 Switching Protocols` (with `subprotocol` and
    /// `headers`, if any) and runs `session` with the connection, which ends when it returns.
    /// A request that does not ask for the upgrade is answered `400`.
    ///
    /// ```swift
    /// server.route("chat") { request in
    ///     .webSocket { connection in
    ///         while case .message(let message) = await connection.receive() {
    ///             connection.send(message)
    ///         }
    ///     }
    /// }
    /// ```
    /// - Parameters:
    ///   - subprotocol: The subprotocol the server chooses, if any.
    ///   - headers: More header fields of the `101` answer.
    ///   - session: What the server does with the connection.
    /// - Returns: The answer.
    public static func webSocket(
        subprotocol: String? = nil, headers: HTTPHeaders = [:],
        _ session: @escaping @Sendable (LoopbackServer.WebSocketConnection) async -> Void
    ) -> Self {
        var response = Self(status: 101, headers: headers)
        response.webSocket = LoopbackServer.WebSocketRoute(subprotocol: subprotocol, session: session)
        return response
    }
}
