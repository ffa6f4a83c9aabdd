#if os(Linux)
    import CCurl

    /// The easy handles of ended transfers, reset and kept for the transport's next ones.
    /// A new handle costs libcurl several large allocations (the handle, its download buffer),
    /// made on one thread and freed on another; reusing one costs a reset. Only the handle of a
    /// transfer libcurl completed cleanly, never paused, is kept (see `CurlTransfer`).
    ///
    /// A reset keeps what libcurl keeps in a handle besides its options: its buffers, its TLS
    /// session cache (for this transport's hosts, checked against the same TLS options) and
    /// the cookie store it is attached to. So a handle attached to the transport's cookie jar
    /// goes only to a request that uses the jar too, and never to one that sends its own
    /// `Cookie` header.
    final class EasyHandles: Sendable {
        private struct Handle: @unchecked Sendable {
            let easy: OpaquePointer
        }

        private struct Kept: Sendable {
            var withJar: [Handle] = []
            var withoutJar: [Handle] = []
            /// Once the transport is gone, handles are cleaned up rather than kept.
            var isClosed = false
            /// How many handles ended transfers gave back, kept or not.
            var given = 0
        }

        /// How many handles are kept at most; past that, ended transfers' handles are cleaned up.
        let limit: Int
        private let kept = Locked(Kept())

        /// - Parameter limit: How many handles to keep at most.
        init(limit: Int) { self.limit = limit }

        deinit { close() }

        /// A kept handle of the same kind, or a new one; `nil` when libcurl cannot make one.
        /// - Parameter withJar: Whether the transfer attaches the transport's cookie jar.
        func take(withJar: Bool) -> OpaquePointer? {
            let reused = kept.withLock { kept in
                withJar ? kept.withJar.popLast() : kept.withoutJar.popLast()
            }
            return reused?.easy ?? courier_curl_easy_init()
        }

        /// Takes back the handle of an ended transfer, no longer in the multi handle.
        /// - Parameters:
        ///   - easy: The handle.
        ///   - withJar: Whether it was attached to the cookie jar.
        ///   - reusable: Whether it may be kept (see `CurlTransfer`); if not, it is cleaned up.
        func give(_ easy: OpaquePointer, withJar: Bool, reusable: Bool) {
            // Reset outside the lock: it frees the transfer's settings.
            if reusable { courier_curl_easy_reset(easy) }
            let keeps = kept.withLock { kept in
                kept.given += 1
                guard reusable, !kept.isClosed, kept.withJar.count + kept.withoutJar.count < limit else { return false }
                if withJar {
                    kept.withJar.append(Handle(easy: easy))
                } else {
                    kept.withoutJar.append(Handle(easy: easy))
                }
                return true
            }
            if !keeps { courier_curl_easy_cleanup(easy) }
        }

        /// How many handles are kept now (for tests).
        var count: Int { kept.withLock { $0.withJar.count + $0.withoutJar.count } }

        /// How many handles ended transfers gave back, kept or not (for tests).
        var givenCount: Int { kept.withLock { $0.given } }

        /// Cleans up every kept handle, and every handle given back from now on (the transport
        /// is going, and its cookie jar can be destroyed only once no handle uses it).
        func close() {
            let handles = kept.withLock { kept in
                kept.isClosed = true
                defer {
                    kept.withJar.removeAll()
                    kept.withoutJar.removeAll()
                }
                return kept.withJar + kept.withoutJar
            }
            for handle in handles { courier_curl_easy_cleanup(handle.easy) }
        }
    }
#endif
