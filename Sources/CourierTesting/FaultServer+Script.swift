import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FaultServer {
    /// One step of a connection's script.
    ///
    /// ```swift
    /// let server = try FaultServer([
    ///     .readHead,
    ///     .send("HTTP/1.1 200 OK\r\n"),
    ///     .pause(.seconds(1)),
    ///     .reset,
    /// ])
    /// ```
    public struct Step: Sendable, Hashable {
        enum Action: Sendable, Hashable {
            case send(Data, times: Int?)
            case trickle(Data, bytesAtATime: Int, every: Duration)
            case pause(Duration)
            case readHead
            case readRequest
            case acceptWebSocket
            case close
            case reset
            case waitForHangUp
        }

        let action: Action

        /// Sends bytes.
        /// - Parameter bytes: The bytes.
        /// - Returns: The step.
        public static func send(_ bytes: Data) -> Step { Step(action: .send(bytes, times: 1)) }

        /// Sends text as UTF-8.
        /// - Parameter text: The text, with its own `\r\n` line ends.
        /// - Returns: The step.
        public static func send(_ text: String) -> Step { send(Data(text.utf8)) }

        /// Sends bytes `times` times in a row (10,000 header lines, say).
        /// - Parameters:
        ///   - bytes: The bytes.
        ///   - times: How often.
        /// - Returns: The step.
        public static func send(_ bytes: Data, times: Int) -> Step { Step(action: .send(bytes, times: max(times, 0))) }

        /// Sends bytes again and again until the client hangs up or the server stops: an endless
        /// header or body.
        /// - Parameter bytes: The bytes repeated.
        /// - Returns: The step.
        public static func sendForever(_ bytes: Data) -> Step { Step(action: .send(bytes, times: nil)) }

        /// Sends bytes a few at a time with a pause between pieces (a slow or slowloris server).
        /// - Parameters:
        ///   - bytes: The bytes.
        ///   - bytesAtATime: The size of each piece.
        ///   - interval: The pause between pieces.
        /// - Returns: The step.
        public static func trickle(_ bytes: Data, bytesAtATime: Int, every interval: Duration) -> Step {
            Step(action: .trickle(bytes, bytesAtATime: max(bytesAtATime, 1), every: interval))
        }

        /// Sends a well-formed answer with `Content-Length`.
        /// - Parameters:
        ///   - status: The status code.
        ///   - headers: More header fields.
        ///   - body: The body.
        /// - Returns: The step.
        public static func respond(status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data()) -> Step {
            var head = "HTTP/1.1 \(status) Status\r\n"
            for field in headers { head += "\(field.name): \(field.value)\r\n" }
            head += "Content-Length: \(body.count)\r\n\r\n"
            return send(Data(head.utf8) + body)
        }

        /// Waits, reading what the client sends meanwhile.
        /// - Parameter duration: How long.
        /// - Returns: The step.
        public static func pause(_ duration: Duration) -> Step { Step(action: .pause(duration)) }

        /// Waits until the next request head has arrived (its body may still be on the way).
        public static let readHead = Step(action: .readHead)

        /// Waits until the next whole request (head and body) has arrived.
        public static let readRequest = Step(action: .readRequest)

        /// Waits for a request head not yet answered by this step (one a ``readHead`` or a
        /// ``pause(_:)`` before it read counts) and switches the connection to the WebSocket
        /// protocol: a `101` with the accept key its `Sec-WebSocket-Key` asks for (a head
        /// without one is answered `400` and the connection closed; a malformed head is never
        /// answered). The steps after it write frames, a broken server's with
        /// ``send(_:)-(WebSocketFault)``.
        public static let acceptWebSocket = Step(action: .acceptWebSocket)

        /// Sends a broken server's WebSocket frame (after ``acceptWebSocket``).
        /// - Parameter fault: The frame.
        /// - Returns: The step.
        public static func send(_ fault: WebSocketFault) -> Step { send(fault.bytes) }

        /// Closes the connection in order (a FIN), reading what the client sends for another
        /// 100 ms so the close is not turned into a reset by unread bytes.
        public static let close = Step(action: .close)

        /// Resets the connection (an RST): the client sees "connection reset by peer".
        public static let reset = Step(action: .reset)

        /// Reads until the client hangs up (or the server stops): a server that never answers.
        /// A script that ends without closing does this too.
        public static let waitForHangUp = Step(action: .waitForHangUp)
    }
}

extension FaultServer {
    /// One accepted connection running its script on its own thread.
    struct ScriptedConnection {
        let socket: Int32
        let index: Int
        let core: Core
        // Bodies are parsed only to count requests: 64 MB each is plenty, and bounds memory.
        private var parser = RequestParser(maximumHeadSize: 1 << 20, maximumBodySize: 64 << 20)
        private var heads = 0
        private var requests = 0
        /// The `Sec-WebSocket-Key` of the latest request head.
        private var webSocketKey: String?
        /// How many request heads had arrived when ``Step/acceptWebSocket`` last answered.
        private var headsUpgraded = 0
        private var chunk = [UInt8](repeating: 0, count: 65_536)
        /// Whether the client hung up or the socket is closed.
        private var isOver = false

        init(socket: Int32, index: Int, core: Core) {
            self.socket = socket
            self.index = index
            self.core = core
        }

        /// Runs the steps, then reads until the client hangs up unless the script closed.
        mutating func run(_ steps: [Step]) {
            for step in steps where !isOver {
                perform(step.action)
            }
            if !isOver { waitForHangUp() }
        }

        private mutating func perform(_ action: Step.Action) {
            switch action {
            case .send(let bytes, let times):
                var sent = 0
                // Nothing to send makes no system call that could fail: never loop on it.
                while !bytes.isEmpty, times.map({ sent < $0 }) ?? true, !isOver, !core.isStopped {
                    if !Sockets.write(socket, bytes) { hungUp() }
                    sent += 1
                }
            case .trickle(let bytes, let size, let interval):
                var offset = 0
                while offset < bytes.count, !isOver {
                    let end = min(offset + size, bytes.count)
                    if !Sockets.write(socket, bytes[offset..<end]) { hungUp() }
                    offset = end
                    if offset < bytes.count { pause(interval) }
                }
            case .pause(let duration):
                pause(duration)
            case .readHead:
                let target = heads + 1
                readUntil { heads, _ in heads >= target }
            case .readRequest:
                let target = requests + 1
                readUntil { _, requests in requests >= target }
            case .acceptWebSocket:
                let target = headsUpgraded + 1
                readUntil { heads, _ in heads >= target }
                guard !isOver else { return }
                headsUpgraded = heads
                guard let key = webSocketKey else {
                    perform(.send(Data("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8), times: 1))
                    return perform(.close)
                }
                let answer =
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(WebSocketHandshake.accept(for: key))\r\n\r\n"
                perform(.send(Data(answer.utf8), times: 1))
            case .close:
                // Shutting down only our side sends a FIN even when unread bytes are queued
                // (a close() would send an RST); then read what is in flight for a moment.
                shutdown(socket, Int32(SHUT_WR))
                readUntil(deadline: .now + .milliseconds(100)) { _, _ in false }
                isOver = true
            case .reset:
                var option = linger(l_onoff: 1, l_linger: 0)
                setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
                isOver = true
            case .waitForHangUp:
                waitForHangUp()
            }
        }

        private mutating func waitForHangUp() {
            readUntil { _, _ in false }
        }

        private mutating func pause(_ duration: Duration) {
            readUntil(deadline: .now + duration) { _, _ in false }
        }

        /// Reads and records what arrives until `done` holds, the deadline passes, or the
        /// client hangs up.
        private mutating func readUntil(
            deadline: ContinuousClock.Instant? = nil, _ done: (_ heads: Int, _ requests: Int) -> Bool
        ) {
            while !done(heads, requests), !isOver {
                if let deadline, ContinuousClock.now >= deadline { return }
                let wait = deadline.map { Sockets.milliseconds(until: $0) } ?? 50
                switch Sockets.receive(socket, into: &chunk, waiting: wait) {
                case .bytes(let bytes): record(bytes)
                case .nothing: if core.isStopped { isOver = true }
                case .closed: hungUp()
                }
            }
        }

        private mutating func record(_ bytes: ArraySlice<UInt8>) {
            core.log.received(bytes, on: index)
            parser.feed(bytes)
            while let event = parser.next() {
                switch event {
                case .head(let head):
                    heads += 1
                    webSocketKey = head.headers["Sec-WebSocket-Key"]
                    core.log.receivedHead(head, on: index)
                case .body:
                    requests += 1
                    core.log.update(index) { $0.completeRequestCount += 1 }
                case .malformed:
                    break  // Still recorded as bytes; nothing after it is framed.
                }
            }
            core.waiters.resolve()
        }

        private mutating func hungUp() {
            if !isOver, !core.isStopped { core.log.update(index) { $0.closedByClient = true } }
            isOver = true
        }
    }
}
