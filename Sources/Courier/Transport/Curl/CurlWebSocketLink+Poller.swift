#if os(Linux)
    import CCurl
    import Foundation

    /// The side of ``CurlWebSocketLink`` that only the ``WebSocketPoller``'s thread runs: reading,
    /// writing what is queued, the conversation's events, keep-alive and deadlines, and the
    /// release of the handle.
    extension CurlWebSocketLink {
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
        /// `buffer` is the poller's, for the bytes read.
        func service(events: Int16, now: ContinuousClock.Instant, buffer: inout [UInt8]) -> Bool {
            let (leftover, reads) = lock.withLock { () -> ([UInt8], Bool) in
                let leftover = state.leftover
                state.leftover = []
                let reads = state.readAgain || events & Int16(POLLIN | POLLHUP | POLLERR) != 0
                state.readAgain = false
                return (leftover, reads && state.end == nil && !state.paused)
            }
            if !leftover.isEmpty { deliver(leftover) }
            if reads { readAvailable(into: &buffer) }
            keepDeadlines(now)
            flush()
            return releaseIfDone(now)
        }

        private func readAvailable(into buffer: inout [UInt8]) {
            for _ in 0..<16 {
                var received = 0
                let code = io.withLock {
                    buffer.withUnsafeMutableBytes { courier_curl_easy_recv(easy, $0.baseAddress, $0.count, &received) }
                }
                if code == Int32(COURIER_CURLE_AGAIN) { return }
                guard code == Int32(COURIER_CURLE_OK) else {
                    return fail(NetworkError(.transport, "The WebSocket's connection was lost (libcurl \(code))."))
                }
                guard received > 0 else { return serverClosed() }
                let more = deliver(buffer[..<received])
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

        /// The server closed the connection: the end of a close this side began, else a failure.
        private func serverClosed() {
            let resumes = lock.withLock { () -> [() -> Void] in
                let lost = NetworkError(
                    .transport, "The server closed the WebSocket's connection without a close frame.")
                return dropConnection(end(state.conversation.phase == .closing ? .closed(nil) : .failed(lost)))
            }
            for resume in resumes { resume() }
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
            // Held throughout: a sender's frame written at once (see ``write(_:)``) never goes
            // between the bytes of one taken from the queue here.
            io.lock()
            defer { io.unlock() }
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
            // Decided under `io`: a sender writing at once has put what it could not finish in
            // the queue by then, or sees the connection released.
            io.lock()
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
            if releasedNow { courier_curl_easy_cleanup(easy) }
            io.unlock()
            guard releasedNow else { return lock.withLock { state.released } }
            for resume in resumes { resume() }
            onEnd?()
            return true
        }
    }
#endif
