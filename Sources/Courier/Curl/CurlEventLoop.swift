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
        private var stopping = false
        private var active: [OpaquePointer: CurlTransfer] = [:] {
            didSet { lock.withLock { handles = active.count } }
        }
        /// `active.count`, readable from any thread.
        private var handles = 0
        private let finished = DispatchSemaphore(value: 0)

        /// How many easy handles libcurl holds now (for leak checks).
        var handleCount: Int { lock.withLock { handles } }

        /// Starts the loop thread.
        /// - Parameter maximumConnectionsPerHost: libcurl's per-host connection limit.
        init(maximumConnectionsPerHost: Int) throws(NetworkError) {
            guard let multi = courier_curl_multi_init() else {
                throw NetworkError(.transport, "libcurl could not make a multi handle.")
            }
            self.multi = multi
            _ = courier_curl_multi_setopt_long(
                multi, Int32(COURIER_CURLMOPT_MAX_HOST_CONNECTIONS), maximumConnectionsPerHost)
            let thread = Thread { [self] in run() }
            thread.name = "Courier.CurlTransport"
            thread.start()
        }

        /// Hands a transfer to libcurl.
        func submit(_ transfer: CurlTransfer) {
            lock.withLock { additions.append(transfer) }
            _ = courier_curl_multi_wakeup(multi)
        }

        /// Takes a transfer out of libcurl (after its caller was answered).
        func remove(_ transfer: CurlTransfer) {
            lock.withLock { removals.append(transfer) }
            _ = courier_curl_multi_wakeup(multi)
        }

        /// Stops every transfer and ends the thread; waits for it.
        func shutDown() {
            lock.withLock { stopping = true }
            _ = courier_curl_multi_wakeup(multi)
            finished.wait()
        }

        private func run() {
            var running: Int32 = 0
            while true {
                let (adding, removing, stop) = lock.withLock {
                    defer {
                        additions.removeAll()
                        removals.removeAll()
                    }
                    return (additions, removals, stopping)
                }
                for transfer in adding {
                    active[transfer.easy] = transfer
                    _ = courier_curl_multi_add_handle(multi, transfer.easy)
                }
                for transfer in removing where active.removeValue(forKey: transfer.easy) != nil {
                    _ = courier_curl_multi_remove_handle(multi, transfer.easy)
                }
                if stop { break }
                _ = courier_curl_multi_perform(multi, &running)
                var easy: OpaquePointer?
                var result: Int32 = 0
                while courier_curl_multi_next_done(multi, &easy, &result) == 1 {
                    guard let easy, let transfer = active.removeValue(forKey: easy) else { continue }
                    _ = courier_curl_multi_remove_handle(multi, easy)
                    transfer.complete(result: result)
                }
                _ = courier_curl_multi_poll(multi, 1000)
            }
            for transfer in active.values {
                _ = courier_curl_multi_remove_handle(multi, transfer.easy)
                transfer.stop(NetworkError(.cancelled, "The transport was shut down."))
            }
            active.removeAll()
            _ = courier_curl_multi_cleanup(multi)
            finished.signal()
        }
    }
#endif
