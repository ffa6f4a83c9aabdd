#if os(Linux)
    import CCurl
    import Foundation

    /// An open WebSocket on a connection libcurl opened (see ``CurlWebSocketOpening``): callers
    /// queue frames and wait for messages under a lock; the ``WebSocketPoller``'s thread reads
    /// the connection, drives the ``WebSocketConversation``, writes what is queued, pings, keeps
    /// the deadlines and finally closes the handle. A message sent while nothing is queued is
    /// written by its sender at once, so the common send costs no wait for the poller's thread.
    ///
    /// `@unchecked Sendable`: `state` is guarded by `lock`; `easy` is used under `io` only (one
    /// thread at a time: libcurl allows no more), which is taken before `lock` when both are
    /// held.
    final class CurlWebSocketLink: WebSocketLink, @unchecked Sendable {
        let socket: Int32
        let easy: OpaquePointer
        let options: WebSocketOptions
        let poller: WebSocketPoller
        let io = NSLock()
        let lock = NSLock()
        var state: State

        /// What waits to be written: a frame, and who waits for it to go.
        struct Outgoing {
            let id: UInt64
            let bytes: Data
            var written = 0
            /// Whether writing it began: from then on it is written whole.
            var started = false
            let isData: Bool
            var sender: CheckedContinuation<Result<Void, NetworkError>, Never>?
        }

        struct PingWaiter {
            let id: UInt64
            let payload: Data
            let continuation: CheckedContinuation<Result<Void, NetworkError>, Never>
        }

        /// How the connection ended.
        enum End {
            /// After a close handshake, or this side's close the server did not answer (`nil`).
            case closed(WebSocketClose?)
            case failed(NetworkError)
        }

        struct State {
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
        static let highWater = 1024 * 1024

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

        static func closedError(_ end: End?) -> NetworkError {
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
            // Masked outside the locks: a large message would hold up the poller's thread.
            let bytes = WebSocketConversation.encode(message)
            let result = await withTaskCancellationHandler {
                defer { lock.withLock {} }
                return await withCheckedContinuation { continuation in
                    switch write(Outgoing(id: id, bytes: bytes, isData: true, sender: continuation)) {
                    case .written: continuation.resume(returning: .success(()))
                    case .queued: poller.wake()
                    case .refused(let error): continuation.resume(returning: .failure(error))
                    }
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

        /// What became of a message handed to ``write(_:)``.
        private enum Writing {
            /// It went whole.
            case written
            /// It waits in the queue (part of it may have gone), for the poller's thread.
            case queued
            /// The connection is closing or closed: it was not sent.
            case refused(NetworkError)
        }

        /// Writes `frame` at once when nothing is queued before it and the poller's thread is not
        /// using the connection (what the socket does not take then stays first in the queue,
        /// begun), else queues it behind the rest: a sender never waits for the poller's writing.
        private func write(_ frame: Outgoing) -> Writing {
            var frame = frame
            let holdsIO = io.try()
            defer { if holdsIO { io.unlock() } }
            let direct = lock.withLock { () -> Bool? in
                // A released connection has ended: this refuses it too.
                guard state.end == nil, state.conversation.phase == .open, !state.released else { return nil }
                guard holdsIO, state.outbound.isEmpty else {
                    state.outbound.append(frame)
                    return false
                }
                return true
            }
            switch direct {
            case nil: return .refused(lock.withLock { Self.closedError(state.end) })
            case false?: return .queued
            case true?: break
            }
            var sent = 0
            let code = frame.bytes.withUnsafeBytes { courier_curl_easy_send(easy, $0.baseAddress!, $0.count, &sent) }
            if code == Int32(COURIER_CURLE_OK), sent == frame.bytes.count { return .written }
            guard code == Int32(COURIER_CURLE_OK) || code == Int32(COURIER_CURLE_AGAIN) else {
                let error = NetworkError(.transport, "The WebSocket's connection was lost (libcurl \(code)).")
                fail(error)
                poller.wake()  // to let the connection go
                return .refused(error)
            }
            frame.written = code == Int32(COURIER_CURLE_OK) ? sent : 0
            // Begun even when nothing went: TLS may have taken part of it, and OpenSSL must be
            // given the same bytes again (from the same address) before anything else.
            frame.started = true
            // First: the poller's thread may have queued a control frame meanwhile, but it
            // writes only under `io`, so nothing went between this frame's bytes.
            lock.withLock { state.outbound.insert(frame, at: 0) }
            return .queued
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

        // MARK: - Shared by both sides

        /// A message's bytes, as the read-ahead limit counts them.
        static func size(of message: WebSocketMessage) -> Int {
            switch message {
            case .text(let text): text.utf8.count
            case .binary(let data): data.count
            }
        }

        /// Queues a control frame: after the frame being written and the control frames waiting,
        /// ahead of the data waiting. A pong takes the place of one not yet begun (a server that
        /// pings faster than it reads gets the latest answer only, as section 5.5.3 allows).
        /// Under `lock`.
        func enqueueControl(_ bytes: Data) {
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
        func dropUnsentData(_ error: NetworkError) -> [() -> Void] {
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
        func end(_ end: End) -> [() -> Void] {
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
        func fail(_ error: NetworkError) {
            let resumes = lock.withLock { dropConnection(end(.failed(error))) }
            for resume in resumes { resume() }
        }

        /// Fails every frame still queued, the one being written among them. Under `lock`.
        func dropConnection(_ resumes: [() -> Void]) -> [() -> Void] {
            var resumes = resumes
            let error = Self.closedError(state.end)
            for frame in state.outbound {
                if let sender = frame.sender { resumes.append { sender.resume(returning: .failure(error)) } }
            }
            state.outbound = []
            return resumes
        }
    }
#endif
