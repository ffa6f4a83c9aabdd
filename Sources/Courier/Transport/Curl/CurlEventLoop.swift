#if os(Linux)
    import CCurl
    import Foundation

    /// The thread that owns one libcurl multi handle: it adds and removes easy handles, drives
    /// every transfer with `curl_multi_perform`, and sleeps in `curl_multi_poll` until a socket,
    /// a libcurl timer or `curl_multi_wakeup` (new work, a cancellation) needs it.
    ///
    /// Only this thread touches the multi handle and its easy handles (libcurl's rule); other
    /// threads queue commands under `lock` and wake it.
    ///
    /// `@unchecked Sendable`: the command queues are guarded by `lock`; `active` is confined to
    /// the loop thread.
    final class CurlEventLoop: @unchecked Sendable {
        private let multi: OpaquePointer
        private let lock = NSLock()
        private var additions: [CurlTransfer] = []
        private var removals: [CurlTransfer] = []
        private var resumptions: [CurlTransfer] = []
        private var stopping = false
        /// Whether the loop sleeps (or is about to) in `curl_multi_poll`: only then does new
        /// work need a wake-up, a write to libcurl's wake-up pipe.
        private var sleeping = false
        /// Set once the loop has taken its last commands: nothing is queued or woken from then on
        /// (the multi handle is about to be cleaned up).
        private var closed = false
        private var active: [OpaquePointer: CurlTransfer] = [:] {
            didSet { lock.withLock { handles = active.count } }
        }
        /// `active.count`, readable from any thread.
        private var handles = 0
        private let finished = DispatchSemaphore(value: 0)
        private let faults: CurlFaults
        /// The plain-HTTP connections libcurl keeps, checked before each reuse (loop thread).
        let keptConnections = KeptConnections()

        /// How many easy handles libcurl holds now (for leak checks).
        var handleCount: Int { lock.withLock { handles } }

        /// Starts the loop thread.
        /// - Parameters:
        ///   - maximumConnectionsPerHost: libcurl's per-host connection limit.
        ///   - maximumStreamsPerConnection: How many requests one HTTP/2 connection carries at
        ///     once; the server's own limit still holds (past it, libcurl opens another).
        ///   - faults: Failures tests inject.
        init(
            maximumConnectionsPerHost: Int, maximumStreamsPerConnection: Int, faults: CurlFaults = CurlFaults()
        ) throws(NetworkError) {
            guard let multi = courier_curl_multi_init() else {
                throw NetworkError(.transport, "libcurl could not make a multi handle.")
            }
            let code = courier_curl_multi_setopt_long(
                multi, Int32(COURIER_CURLMOPT_MAX_HOST_CONNECTIONS), maximumConnectionsPerHost)
            guard code == 0 else {
                _ = courier_curl_multi_cleanup(multi)
                throw NetworkError(.transport, "libcurl refused the connection limit (multi error \(code)).")
            }
            // libcurl's own limit is 100 streams on an HTTP/2 connection; past it, it opens
            // another connection. Before 7.67 there is no such setting, and nothing to change.
            _ = courier_curl_multi_setopt_long(
                multi, Int32(COURIER_CURLMOPT_MAX_CONCURRENT_STREAMS), maximumStreamsPerConnection)
            self.multi = multi
            self.faults = faults
            let thread = Thread { [self] in run() }
            thread.name = "Courier.CurlTransport"
            thread.start()
        }

        /// Hands a transfer to libcurl; one handed to a loop that has ended is stopped.
        func submit(_ transfer: CurlTransfer) {
            guard wakeAfter({ additions.append(transfer) }) else {
                transfer.stop(NetworkError(.cancelled, "The transport was shut down."))
                return
            }
        }

        /// Takes a transfer out of libcurl (after its caller was answered).
        func remove(_ transfer: CurlTransfer) {
            wakeAfter { removals.append(transfer) }
        }

        /// Lets a transfer paused for its streamed body's reader go on.
        func resume(_ transfer: CurlTransfer) {
            wakeAfter { resumptions.append(transfer) }
        }

        /// Stops every transfer and ends the thread; waits for it.
        func shutDown() {
            wakeAfter { stopping = true }
            finished.wait()
        }

        /// Queues a command under the lock, then wakes the loop if it sleeps. A loop that is
        /// awake looks at the queues again before it sleeps (see ``run()``). Should libcurl fail
        /// to wake it, the loop still looks for work within ``pollInterval``.
        /// - Returns: `false` when the loop has ended: nothing is queued (a stream's reader may
        ///   outlive its transport, and nothing queued now would ever be let go).
        @discardableResult
        private func wakeAfter(_ queue: () -> Void) -> Bool {
            // Under the lock: the loop cleans up the multi handle only after taking it.
            lock.withLock {
                guard !closed else { return false }
                queue()
                if sleeping { _ = courier_curl_multi_wakeup(multi) }
                sleeping = false
                return true
            }
        }

        /// The longest the loop sleeps without a wake-up.
        private static let pollInterval: Int32 = 1000

        private func run() {
            var running: Int32 = 0
            while true {
                let (adding, removing, resuming, stop) = lock.withLock {
                    defer {
                        // Stopping: nothing queued from now on would be taken.
                        closed = stopping
                        sleeping = false
                        additions.removeAll()
                        removals.removeAll()
                        resumptions.removeAll()
                    }
                    return (additions, removals, resumptions, stopping)
                }
                // A transfer cancelled between its start and its hand-over is never sent.
                for transfer in adding where transfer.isRunning {
                    let code = faults.addHandleResult ?? courier_curl_multi_add_handle(multi, transfer.easy)
                    guard code == 0 else {
                        transfer.stop(
                            NetworkError(.transport, "libcurl could not start the transfer (multi error \(code))."))
                        continue
                    }
                    active[transfer.easy] = transfer
                }
                // Removing a handle libcurl holds fails only for a handle it does not hold.
                for transfer in removing where active.removeValue(forKey: transfer.easy) != nil {
                    _ = courier_curl_multi_remove_handle(multi, transfer.easy)
                }
                // libcurl delivers the piece it kept, then reads the socket again.
                for transfer in resuming where active[transfer.easy] != nil {
                    _ = courier_curl_easy_pause(transfer.easy, Int32(COURIER_CURLPAUSE_CONT))
                }
                if stop { break }
                let performed = courier_curl_multi_perform(multi, &running)
                var easy: OpaquePointer?
                var result: Int32 = 0
                while courier_curl_multi_next_done(multi, &easy, &result) == 1 {
                    guard let easy, let transfer = active.removeValue(forKey: easy) else { continue }
                    // Only while the handle is in libcurl does it know its connection's socket.
                    if transfer.checksConnection { keptConnections.record(easy) }
                    _ = courier_curl_multi_remove_handle(multi, easy)
                    transfer.complete(result: result)
                }
                // Sleeps only when no command came in since the queues were taken; from then on
                // a new one wakes it.
                let sleeps = lock.withLock {
                    sleeping = additions.isEmpty && removals.isEmpty && resumptions.isEmpty && !stopping
                    return sleeping
                }
                let polled = sleeps ? courier_curl_multi_poll(multi, Self.pollInterval) : 0
                // A multi handle that fails (out of memory) drives nothing: end what it holds,
                // rather than leave callers waiting for their deadlines.
                if let code = [performed, polled].first(where: { $0 > 0 }) {
                    failAll(NetworkError(.transport, "libcurl's event loop failed (multi error \(code))."))
                    Thread.sleep(forTimeInterval: 0.01)  // a poll that keeps failing must not spin
                }
            }
            failAll(NetworkError(.cancelled, "The transport was shut down."))
            _ = courier_curl_multi_cleanup(multi)
            finished.signal()
        }

        /// Takes every transfer out of libcurl and answers its caller with `error`.
        private func failAll(_ error: NetworkError) {
            for transfer in active.values {
                _ = courier_curl_multi_remove_handle(multi, transfer.easy)
                transfer.stop(error)
            }
            active.removeAll()
        }
    }
#endif
