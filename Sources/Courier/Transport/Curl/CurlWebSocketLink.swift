#if os(Linux)
    import CCurl
    import Foundation

    /// An open WebSocket on a connection libcurl opened (see ``CurlWebSocketOpening``): callers
    /// queue frames and wait for messages under a lock; the ``WebSocketPoller``'s thread alone
    /// reads and writes the connection, drives the ``WebSocketConversation``, pings, keeps the
    /// deadlines and finally closes the handle.
    ///
    /// `@unchecked Sendable`: `state` is guarded by `lock`; `easy` and `readBuffer` are used by
    /// the poller's thread only.
    final class CurlWebSocketLink: WebSocketLink, @unchecked Sendable {
        let socket: Int32
        private let easy: OpaquePointer
        private let options: WebSocketOptions
        private let poller: WebSocketPoller
        private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
        private let lock = NSLock()
        private var state: State

        /// What waits to be written: a frame, and who waits for it to go.
        private struct Outgoing {
            let id: UInt64
            let bytes: Data
            var written = 0
            /// Whether writing it began: from then on it is written whole.
            var started = false
            let isData: Bool
            var sender: CheckedContinuation<Result<Void, NetworkError>, Never>?
        }

        private struct PingWaiter {
            let id: UInt64
            let payload: Data
            let continuation: CheckedContinuation<Result<Void, NetworkError>, Never>
        }

        /// How the connection ended.
        private enum End {
            /// After a close handshake, or this side's close the server did not answer (`nil`).
            case closed(WebSocketClose?)
            case failed(NetworkError)
        }

        private struct State {
            var conversation: WebSocketConversation
            var leftover: [UInt8]
            var outbound: [Outgoing] = []
            var nextID: UInt64 = 0
            var inbound: [WebSocketMessage] = []
            var inboundBytes = 0
            var receiver: CheckedContinuation<Result<WebSocketMessage?, NetworkError>, Never>?
            var pings: [PingWaiter] = []
            var closers: [CheckedContinuation<Void, Never>] = []
            var end: End?
            var closeFrame: WebSocketClose?
            /// Whether the handle was closed: the poller has let the connection go.
            var released = false
            /// Whether reading stopped because the reader is behind.
            var paused = false
            /// Whether to read even if the socket shows nothing (after a pause: TLS may hold bytes).
            var readAgain = false
            /// When the connection is dropped at the latest (a close under way).
            var deadline: ContinuousClock.Instant?
            var nextPing: ContinuousClock.Instant?
            var unansweredPings = 0
            var onEnd: (@Sendable () -> Void)?
        }

        /// The most bytes of messages held for a reader that is behind before reading stops.
        private static let highWater = 1024 * 1024

        init(
            easy: OpaquePointer, socket: Int32, leftover: [UInt8], options: WebSocketOptions,
            poller: WebSocketPoller = .shared
        ) {
            self.easy = easy
            self.socket = socket
            // Settled again: the options' properties may have been set past the initialiser's checks.
            self.options = WebSocketOptions(
                maximumMessageSize: options.maximumMessageSize, pingInterval: options.pingInterval,
                closeTimeout: options.closeTimeout)
            self.poller = poller
            // Read at once: libcurl may hold bytes that came with the handshake's answer.
            state = State(
                conversation: WebSocketConversation(maximumMessageSize: options.maximumMessageSize), leftover: leftover,
                readAgain: true, nextPing: self.options.pingInterval.map { .now + $0 })
        }

        /// Starts serving the connection.
        func start() {
            poller.add(self)
        }

        func whenEnded(_ action: @escaping @Sendable () -> Void) {
            let now = lock.withLock {
                if state.released { return true }
                let earlier = state.onEnd
                state.onEnd = {
                    earlier?()
                    action()
                }
                return false
            }
            if now { action() }
        }

        var closeFrame: WebSocketClose? { lock.withLock { state.closeFrame } }

        private static func closedError(_ end: End?) -> NetworkError {
            switch end {
            case .failed(let error): error
            case .closed(let close?):
                NetworkError(.transport, "The WebSocket is closed (code \(close.code.rawValue)).")
            case .closed(nil), nil: NetworkError(.transport, "The WebSocket is closed.")
            }
        }

        // MARK: - Callers

        func send(_ message: WebSocketMessage) async throws(NetworkError) {
            guard !Task.isCancelled else {
                throw NetworkError(.cancelled, "The message was not sent: its task was cancelled.")
            }
            let id = lock.withLock { () -> UInt64 in
                state.nextID += 1
                return state.nextID
            }
            // Masked outside the lock: a large message would hold up the poller's thread.
            let bytes = WebSocketConversation.encode(message)
            let result = await withTaskCancellationHandler {
                defer { lock.withLock {} }
                return await withCheckedContinuation { continuation in
                    let refused = lock.withLock { () -> NetworkError? in
                        guard state.end == nil, state.conversation.phase == .open else {
                            return Self.closedError(state.end)
                        }
                        state.outbound.append(Outgoing(id: id, bytes: bytes, isData: true, sender: continuation))
                        return nil
                    }
                    if let refused { return continuation.resume(returning: .failure(refused)) }
                    poller.wake()
                }
            } onCancel: {
                let sender = lock.withLock { () -> CheckedContinuation<Result<Void, NetworkError>, Never>? in
                    guard let index = state.outbound.firstIndex(where: { $0.id == id && !$0.started }) else {
                        return nil
                    }
                    return state.outbound.remove(at: index).sender
                }
                sender?.resume(
                    returning: .failure(NetworkError(.cancelled, "The message was not sent: its task was cancelled.")))
            }
            try result.get()
        }

        func receive() async throws(NetworkError) -> WebSocketMessage? {
            let result = await withTaskCancellationHandler {
                defer { lock.withLock {} }
                return await withCheckedContinuation { continuation in
                    let (now, wakes) = lock.withLock { () -> (Result<WebSocketMessage?, NetworkError>?, Bool) in
                        if !state.inbound.isEmpty {
                            let message = state.inbound.removeFirst()
                            state.inboundBytes -= Self.size(of: message)
                            let wakes = state.paused && state.inboundBytes < Self.highWater
                            if wakes {
                                state.paused = false
                                state.readAgain = true
                            }
                            return (.success(message), wakes)
                        }
                        switch state.end {
                        case .closed: return (.success(nil), false)
                        case .failed(let error): return (.failure(error), false)
                        case nil: break
                        }
                        guard state.receiver == nil else {
                            return (
                                .failure(
                                    NetworkError(.invalidRequest, "Another task reads this WebSocket's messages.")),
                                false
                            )
                        }
                        state.receiver = continuation
                        return (nil, false)
                    }
                    if wakes { poller.wake() }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                abort(
                    NetworkError(.cancelled, "The task reading the WebSocket's messages was cancelled."),
                    code: .goingAway)
            }
            return try result.get()
        }

        func ping() async throws(NetworkError) {
            guard !Task.isCancelled else { throw NetworkError(.cancelled, "The ping was cancelled.") }
            let payload = Data(SystemCrypto.randomBytes(8))
            let id = lock.withLock { () -> UInt64 in
                state.nextID += 1
                return state.nextID
            }
            let result = await withTaskCancellationHandler {
                defer { lock.withLock {} }
                return await withCheckedContinuation { continuation in
                    let refused = lock.withLock { () -> NetworkError? in
                        guard state.end == nil, let bytes = state.conversation.ping(payload) else {
                            return Self.closedError(state.end)
                        }
                        state.outbound.append(Outgoing(id: id, bytes: bytes, isData: false))
                        state.pings.append(PingWaiter(id: id, payload: payload, continuation: continuation))
                        return nil
                    }
                    if let refused { return continuation.resume(returning: .failure(refused)) }
                    poller.wake()
                }
            } onCancel: {
                let waiter = lock.withLock { () -> PingWaiter? in
                    guard let index = state.pings.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.pings.remove(at: index)
                }
                waiter?.continuation.resume(returning: .failure(NetworkError(.cancelled, "The ping was cancelled.")))
            }
            try result.get()
        }

        func close(_ close: WebSocketClose) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                var resumes: [() -> Void] = []
                let done = lock.withLock { () -> Bool in
                    guard !state.released else { return true }
                    if state.end == nil, let bytes = state.conversation.close(close) {
                        enqueueControl(bytes)
                        // Nothing may follow the close: messages not yet begun fail.
                        resumes = dropUnsentData(Self.closedError(.closed(close)))
                        state.deadline = .now + options.closeTimeout
                        // The server's close must be read, even behind messages nobody reads.
                        state.paused = false
                        state.readAgain = true
                    }
                    state.closers.append(continuation)
                    return false
                }
                for resume in resumes { resume() }
                if done { return continuation.resume() }
                poller.wake()
            }
            lock.withLock {}
        }

        func abort(_ error: NetworkError, code: WebSocketCloseCode) {
            let resumes = lock.withLock { () -> [() -> Void] in
                // Nothing held for the reader is handed out after this (a logout's end, say), even
                // when the connection had ended already.
                state.inbound = []
                state.inboundBytes = 0
                guard state.end == nil else {
                    if case .closed = state.end { state.end = .failed(error) }
                    return []
                }
                if let bytes = state.conversation.close(WebSocketClose(code: code)) { enqueueControl(bytes) }
                return end(.failed(error))
            }
            for resume in resumes { resume() }
            poller.wake()
        }

        // MARK: - The poller's thread

        /// What the poller waits for on the socket.
        func interest() -> Int16 {
            lock.withLock {
                guard !state.released else { return 0 }
                var events: Int16 = 0
                if state.end == nil, !state.paused { events |= Int16(POLLIN) }
                if !state.outbound.isEmpty { events |= Int16(POLLOUT) }
                return events
            }
        }

        /// The next time the poller must serve the connection without a socket event.
        var nextDeadline: ContinuousClock.Instant? {
            lock.withLock {
                guard !state.released else { return nil }
                if state.readAgain { return .now }
                switch (state.deadline, state.end == nil ? state.nextPing : nil) {
                case (let a?, let b?): return min(a, b)
                case (let a?, nil): return a
                case (nil, let b?): return b
                case (nil, nil): return nil
                }
            }
        }

        /// Reads, writes and keeps the deadlines; `true` once the connection is closed.
        func service(events: Int16, now: ContinuousClock.Instant) -> Bool {
            let (leftover, reads) = lock.withLock { () -> ([UInt8], Bool) in
                let leftover = state.leftover
                state.leftover = []
                let reads = state.readAgain || events & Int16(POLLIN | POLLHUP | POLLERR) != 0
                state.readAgain = false
                return (leftover, reads && state.end == nil && !state.paused)
            }
            if !leftover.isEmpty { deliver(leftover) }
            if reads { readAvailable() }
            keepDeadlines(now)
            flush()
            return releaseIfDone(now)
        }

        private func readAvailable() {
            for _ in 0..<16 {
                var received = 0
                let code = readBuffer.withUnsafeMutableBytes {
                    courier_curl_easy_recv(easy, $0.baseAddress, $0.count, &received)
                }
                if code == Int32(COURIER_CURLE_AGAIN) { return }
                guard code == Int32(COURIER_CURLE_OK) else {
                    return fail(NetworkError(.transport, "The WebSocket's connection was lost (libcurl \(code))."))
                }
                guard received > 0 else { return serverClosed() }
                let more = deliver(readBuffer[..<received])
                guard more else { return }
            }
            // More may be waiting: the next round reads it.
            lock.withLock { state.readAgain = state.end == nil && !state.paused }
        }

        /// Feeds bytes to the conversation; `false` once reading should stop.
        @discardableResult
        private func deliver(_ bytes: some Sequence<UInt8>) -> Bool {
            let (resumes, more) = lock.withLock { () -> ([() -> Void], Bool) in
                // Whatever arrives shows the server alive, as a pong would.
                state.unansweredPings = 0
                var resumes: [() -> Void] = []
                for event in state.conversation.receive(bytes) {
                    switch event {
                    case .message(let message):
                        if let receiver = state.receiver {
                            state.receiver = nil
                            resumes.append { receiver.resume(returning: .success(message)) }
                        } else {
                            state.inbound.append(message)
                            state.inboundBytes += Self.size(of: message)
                            if state.inboundBytes >= Self.highWater { state.paused = true }
                        }
                    case .pong(let payload):
                        // A pong answers its ping and every one before it.
                        if let index = state.pings.firstIndex(where: { $0.payload == payload }) {
                            for waiter in state.pings[...index] {
                                resumes.append { waiter.continuation.resume(returning: .success(())) }
                            }
                            state.pings.removeFirst(index + 1)
                        }
                    case .write(let bytes):
                        enqueueControl(bytes)
                    case .closed(let close):
                        state.closeFrame = close
                        resumes += end(.closed(close))
                    case .failed(let error):
                        resumes += end(.failed(Self.networkError(for: error)))
                    }
                }
                return (resumes, state.end == nil && !state.paused)
            }
            for resume in resumes { resume() }
            return more
        }

        private static func networkError(for error: WebSocketProtocolError) -> NetworkError {
            if error.closeCode == .messageTooBig {
                return NetworkError(
                    .responseTooLarge, "The server sent a WebSocket message past the limit: \(error.reason).")
            }
            return NetworkError(
                .transport,
                "The server broke the WebSocket protocol: \(error.reason) (closed with \(error.closeCode.rawValue)).")
        }

        private static func size(of message: WebSocketMessage) -> Int {
            switch message {
            case .text(let text): text.utf8.count
            case .binary(let data): data.count
            }
        }

        /// Queues a control frame: after the frame being written and the control frames waiting,
        /// ahead of the data waiting. A pong takes the place of one not yet begun (a server that
        /// pings faster than it reads gets the latest answer only, as section 5.5.3 allows).
        /// Under `lock`.
        private func enqueueControl(_ bytes: Data) {
            state.nextID += 1
            let frame = Outgoing(id: state.nextID, bytes: bytes, isData: false)
            let isPong = bytes.first.map { $0 & 0x0F == WebSocketFrame.Opcode.pong.rawValue } ?? false
            if isPong,
                let waiting = state.outbound.firstIndex(where: {
                    !$0.started && !$0.isData && $0.bytes.first == bytes.first
                })
            {
                state.outbound[waiting] = frame
                return
            }
            let index = state.outbound.firstIndex { !$0.started && $0.isData } ?? state.outbound.endIndex
            state.outbound.insert(frame, at: index)
        }

        /// Fails the messages not yet begun: nothing may follow a close. Under `lock`.
        private func dropUnsentData(_ error: NetworkError) -> [() -> Void] {
            var resumes: [() -> Void] = []
            state.outbound.removeAll { frame in
                guard frame.isData, !frame.started else { return false }
                if let sender = frame.sender { resumes.append { sender.resume(returning: .failure(error)) } }
                return true
            }
            return resumes
        }

        /// Records how the connection ended (the first end counts) and fails what waits on it:
        /// the reader when nothing is held for it, pings, and messages not yet begun. Under `lock`.
        private func end(_ end: End) -> [() -> Void] {
            guard state.end == nil else { return [] }
            state.end = end
            state.conversation.end()
            let error = Self.closedError(end)
            var resumes: [() -> Void] = []
            if let receiver = state.receiver {
                state.receiver = nil
                let result: Result<WebSocketMessage?, NetworkError>
                if case .failed(let error) = end { result = .failure(error) } else { result = .success(nil) }
                resumes.append { receiver.resume(returning: result) }
            }
            for waiter in state.pings { resumes.append { waiter.continuation.resume(returning: .failure(error)) } }
            state.pings = []
            resumes += dropUnsentData(error)
            // The close in answer, if any, gets a moment to go.
            if state.deadline == nil { state.deadline = .now + options.closeTimeout }
            return resumes
        }

        /// The connection broke: nothing more can be written.
        private func fail(_ error: NetworkError) {
            let resumes = lock.withLock { dropConnection(end(.failed(error))) }
            for resume in resumes { resume() }
        }

        /// The server closed the connection: the end of a close this side began, else a failure.
        private func serverClosed() {
            let resumes = lock.withLock { () -> [() -> Void] in
                let lost = NetworkError(
                    .transport, "The server closed the WebSocket's connection without a close frame.")
                return dropConnection(end(state.conversation.phase == .closing ? .closed(nil) : .failed(lost)))
            }
            for resume in resumes { resume() }
        }

        /// Fails every frame still queued, the one being written among them. Under `lock`.
        private func dropConnection(_ resumes: [() -> Void]) -> [() -> Void] {
            var resumes = resumes
            let error = Self.closedError(state.end)
            for frame in state.outbound {
                if let sender = frame.sender { resumes.append { sender.resume(returning: .failure(error)) } }
            }
            state.outbound = []
            return resumes
        }

        private func keepDeadlines(_ now: ContinuousClock.Instant) {
            let resumes = lock.withLock { () -> [() -> Void] in
                if let deadline = state.deadline, now >= deadline, state.end == nil {
                    // This side's close went unanswered.
                    return end(.closed(nil))
                }
                guard state.end == nil, let interval = options.pingInterval, let next = state.nextPing, now >= next
                else {
                    return []
                }
                // While the reader is behind, nothing is read: no ping counts as missed.
                guard !state.paused else {
                    state.unansweredPings = 0
                    state.nextPing = now + interval
                    return []
                }
                guard state.unansweredPings < 2 else {
                    return end(
                        .failed(NetworkError(.timedOut, "The server answered none of two pings, \(interval) apart.")))
                }
                state.unansweredPings += 1
                state.nextPing = now + interval
                if let bytes = state.conversation.ping(Data("courier".utf8)) { enqueueControl(bytes) }
                return []
            }
            for resume in resumes { resume() }
        }

        /// Writes what the socket takes now.
        private func flush() {
            while true {
                let head = lock.withLock { () -> (id: UInt64, bytes: Data, written: Int)? in
                    guard !state.outbound.isEmpty else { return nil }
                    state.outbound[0].started = true
                    let frame = state.outbound[0]
                    return (frame.id, frame.bytes, frame.written)
                }
                guard let head else { return }
                var sent = 0
                let code = head.bytes.withUnsafeBytes { bytes in
                    courier_curl_easy_send(easy, bytes.baseAddress! + head.written, bytes.count - head.written, &sent)
                }
                if code == Int32(COURIER_CURLE_AGAIN) { return }
                guard code == Int32(COURIER_CURLE_OK) else {
                    return fail(NetworkError(.transport, "The WebSocket's connection was lost (libcurl \(code))."))
                }
                let sender = lock.withLock { () -> CheckedContinuation<Result<Void, NetworkError>, Never>? in
                    guard let index = state.outbound.firstIndex(where: { $0.id == head.id }) else { return nil }
                    state.outbound[index].written += sent
                    guard state.outbound[index].written == head.bytes.count else { return nil }
                    return state.outbound.remove(at: index).sender
                }
                sender?.resume(returning: .success(()))
            }
        }

        /// Closes the handle once the connection ended and its last frames went (or the
        /// deadline passed); answers everyone still waiting.
        private func releaseIfDone(_ now: ContinuousClock.Instant) -> Bool {
            let (releasedNow, resumes, onEnd) = lock.withLock { () -> (Bool, [() -> Void], (@Sendable () -> Void)?) in
                guard !state.released else { return (false, [], nil) }
                guard state.end != nil, state.outbound.isEmpty || state.deadline.map({ now >= $0 }) ?? false else {
                    return (false, [], nil)
                }
                state.released = true
                var resumes = dropConnection([])
                for closer in state.closers { resumes.append { closer.resume() } }
                state.closers = []
                defer { state.onEnd = nil }
                return (true, resumes, state.onEnd)
            }
            guard releasedNow else { return lock.withLock { state.released } }
            courier_curl_easy_cleanup(easy)
            for resume in resumes { resume() }
            onEnd?()
            return true
        }
    }
#endif
