#if os(Linux)
    import Foundation

    /// The one thread that carries every open Linux WebSocket's bytes: it waits on all their
    /// sockets at once (`poll`), and on a pipe that wakes it when a connection has something to
    /// write or read again. A connection is served only here, so its libcurl handle is never
    /// used by two threads.
    ///
    /// `@unchecked Sendable`: `links` and `thread` are guarded by `lock`; the pipe's ends never
    /// change.
    final class WebSocketPoller: @unchecked Sendable {
        /// The poller of the process.
        static let shared = WebSocketPoller()

        private let lock = NSLock()
        private var links: [ObjectIdentifier: CurlWebSocketLink] = [:]
        private var started = false
        private let wakeRead: Int32
        private let wakeWrite: Int32

        private init() {
            var ends: [Int32] = [-1, -1]
            // Without a pipe the poller still serves its connections, every 50 ms (see `run`).
            if pipe(&ends) == 0 {
                for end in ends {
                    _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                }
            } else {
                ends = [-1, -1]
            }
            wakeRead = ends[0]
            wakeWrite = ends[1]
        }

        /// Serves a connection from now until it ends.
        func add(_ link: CurlWebSocketLink) {
            let start = lock.withLock {
                links[ObjectIdentifier(link)] = link
                defer { started = true }
                return !started
            }
            if start {
                let thread = Thread { [self] in run() }
                thread.name = "Courier WebSocket"
                thread.start()
            }
            wake()
        }

        /// Wakes the thread: a connection has bytes to write, room to read, or a new deadline.
        func wake() {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }

        private func run() {
            var drain = [UInt8](repeating: 0, count: 64)
            // One buffer for every connection's reads: they are read one at a time, here.
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let served = lock.withLock { Array(links.values) }
                var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                let now = ContinuousClock.now
                var timeout = wakeRead < 0 ? 50 : -1
                for link in served {
                    let interest = link.interest()
                    // A socket nothing is wanted of is left out: a closed one would wake the
                    // thread over and over.
                    descriptors.append(pollfd(fd: interest == 0 ? -1 : link.socket, events: interest, revents: 0))
                    if let deadline = link.nextDeadline {
                        let left = max(0, Int(((deadline - now).seconds * 1000).rounded(.up)))
                        timeout = timeout < 0 ? left : min(timeout, left)
                    }
                }
                _ = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: timeout))
                if descriptors[0].revents != 0 {
                    while read(wakeRead, &drain, drain.count) > 0 {}
                }
                let later = ContinuousClock.now
                var ended: [ObjectIdentifier] = []
                for (index, link) in served.enumerated()
                where link.service(events: descriptors[index + 1].revents, now: later, buffer: &buffer) {
                    ended.append(ObjectIdentifier(link))
                }
                if !ended.isEmpty { lock.withLock { for id in ended { links[id] = nil } } }
            }
        }
    }
#endif
