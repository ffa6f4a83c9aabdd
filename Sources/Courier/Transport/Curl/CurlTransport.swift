#if os(Linux)
    import CCurl
    import Foundation

    /// A ``Transport`` on libcurl's multi interface, for Linux: faster than `URLSession` there
    /// and free of its faults, with TLS pinning and custom certificate authorities.
    ///
    /// libcurl is loaded at run time from the `libcurl.so.4` that FoundationNetworking already
    /// links, so nothing needs to be installed. One event-loop thread per transport drives
    /// every transfer and keeps connections alive for reuse; HTTP/2 is used over TLS when the
    /// server offers it.
    ///
    /// - The deadline is overall (libcurl's `TIMEOUT_MS`): a trickling server times out.
    /// - At most 16 times ``Options-swift.struct/maximumConnectionsPerHost`` requests to one
    ///   origin wait for their answer's head in libcurl at once; later ones wait in line, in the
    ///   order they came, holding no libcurl handle, so thousands in flight cost little memory.
    ///   Their deadline and cancellation count from the moment they were sent. A streamed answer
    ///   leaves its place at its head; a limit of 0 means no limit and no line.
    /// - Over HTTPS, when no request to an origin is under way, the first one goes alone until
    ///   its connection is ready (a kept-alive one is ready at once) and the others follow; when
    ///   the connection speaks HTTP/2 they share it rather than each opening one. At most 100
    ///   requests to an HTTPS origin wait for their answer's head in libcurl at once (fewer if
    ///   the limit above is lower, more if the connection limit is higher), the fewest streams
    ///   servers are asked to let one connection carry: past the server's limit libcurl would
    ///   open a connection for each request that does not fit. (Streamed answers, which leave
    ///   their place at their head, still hold a stream.) If the first one fails before it
    ///   connects, the others go at once. A connection limit of 0 turns this off too. (libcurl before 7.80 cannot tell when a connection is ready; there
    ///   they go at once.)
    /// - Cancelling the calling task answers at once with ``NetworkError/Code/cancelled``; the
    ///   handle is taken out of libcurl on its own thread, so cancellation never races it.
    /// - Errors are precise: DNS, refused, lost, ``NetworkError/Code/timedOut``,
    ///   ``NetworkError/Code/tls`` for an untrusted certificate or a pin mismatch.
    /// - Certificate validation cannot be switched off.
    /// - Cookies that servers set are kept in memory for the transport's life and sent back by
    ///   the usual domain and path rules, as `URLSession`'s ephemeral configuration does (see
    ///   ``Options-swift.struct/keepsCookies``).
    public final class CurlTransport: Transport, CourierTransport {
        /// Settings of a transport.
        public struct Options: Sendable, Hashable {
            /// Certificate authorities and public-key pins.
            public var tls: TLSOptions
            /// How many connections to one host at most (more requests wait for one); 0 means no
            /// limit, and no line in front of libcurl (see ``CurlTransport``). Over HTTPS at most
            /// 100 requests to one origin, or this many when it is more, are in libcurl at once.
            public var maximumConnectionsPerHost: Int
            /// Whether cookies set by servers are kept (in memory, for this transport only) and
            /// sent back. A request that carries its own `Cookie` header is sent with exactly
            /// that header, and what its answer sets is not kept.
            public var keepsCookies: Bool

            /// Creates options.
            /// - Parameters:
            ///   - tls: Certificate authorities and pins; the system's authorities by default.
            ///   - maximumConnectionsPerHost: The per-host connection limit, 16 by default.
            ///   - keepsCookies: Whether to keep and send back cookies; `true` by default, as
            ///     `URLSessionTransport` does.
            public init(tls: TLSOptions = TLSOptions(), maximumConnectionsPerHost: Int = 16, keepsCookies: Bool = true)
            {
                self.tls = tls
                self.maximumConnectionsPerHost = maximumConnectionsPerHost
                self.keepsCookies = keepsCookies
            }
        }

        /// The settings the transport was made with.
        public let options: Options
        private let loop: CurlEventLoop
        /// libcurl's cookie store; safe to share between threads (it locks itself).
        private nonisolated(unsafe) let cookieJar: OpaquePointer?
        /// Easy handles of ended transfers, kept for the next ones.
        private let handles: EasyHandles
        /// The line of requests waiting for a place in libcurl.
        private let admission: TransferAdmission
        private let faults: CurlFaults

        /// Whether libcurl could be loaded on this machine.
        public static var isAvailable: Bool { courier_curl_load() == 0 }

        /// libcurl's version text, or `nil` when it cannot be loaded.
        public static var libcurlVersion: String? {
            isAvailable ? String(cString: courier_curl_version()) : nil
        }

        /// Creates a transport with its own event-loop thread.
        /// - Parameter options: TLS and connection settings.
        /// - Throws: ``NetworkError/Code/transport`` when libcurl cannot be loaded.
        public convenience init(options: Options = Options()) throws(NetworkError) {
            try self.init(options: options, faults: CurlFaults())
        }

        /// Creates a transport whose libcurl calls fail as `faults` says (for tests).
        init(options: Options, faults: CurlFaults) throws(NetworkError) {
            guard courier_curl_load() == 0 else {
                let reason = courier_curl_load_error().map { String(cString: $0) } ?? "unknown"
                throw NetworkError(.transport, "libcurl.so.4 could not be loaded: \(reason).")
            }
            var cookieJar: OpaquePointer?
            if options.keepsCookies {
                guard let jar = courier_curl_cookie_jar_create() else {
                    throw NetworkError(.transport, "libcurl could not make a cookie jar.")
                }
                cookieJar = jar
            }
            // 0 (or less) is libcurl's "no limit".
            let connections = options.maximumConnectionsPerHost > 0 ? options.maximumConnectionsPerHost : Int.max
            // Past the connections, enough waiting in libcurl that a freed connection (or an
            // HTTP/2 stream) starts the next request at once.
            let admitted = connections > Int.max / 16 ? Int.max : connections * 16
            do {
                // At least as many HTTP/2 streams on one connection as requests admitted to one
                // origin, so the requests sent at once share a connection.
                loop = try CurlEventLoop(
                    maximumConnectionsPerHost: options.maximumConnectionsPerHost,
                    maximumStreamsPerConnection: min(admitted, Int(Int32.max)), faults: faults)
            } catch {
                if let cookieJar { _ = courier_curl_cookie_jar_destroy(cookieJar) }
                throw error
            }
            self.options = options
            self.cookieJar = cookieJar
            // Enough for every connection to a few hosts at once; a handle kept costs about 30 KB.
            handles = EasyHandles(limit: max(16, min(connections, 256) * 2))
            admission = TransferAdmission(limit: admitted, connections: connections)
            self.faults = faults
        }

        deinit {
            loop.shutDown()
            // Kept handles use the jar; were a transfer's handle left, libcurl refuses and the jar stays.
            handles.close()
            if let cookieJar { _ = courier_curl_cookie_jar_destroy(cookieJar) }
        }

        /// How many transfers libcurl holds now; 0 once every request has ended.
        var activeTransferCount: Int { loop.handleCount }

        /// How many easy handles of ended transfers are kept for reuse.
        var keptHandleCount: Int { handles.count }

        /// How many easy handles ended transfers gave back, kept or not.
        var givenHandleCount: Int { handles.givenCount }

        /// How many transfers to one origin are let into libcurl at once.
        var admissionLimit: Int { admission.limit }

        /// How many easy handles are kept at most.
        var keptHandleLimit: Int { handles.limit }

        /// Sends one request; see ``Transport/send(_:)``.
        /// - Parameter request: The request.
        /// - Returns: The answer, with any status.
        /// - Throws: ``NetworkError``.
        public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            // Here, not in the client, so a caller without one is checked too: libcurl sends
            // header lines as given.
            try request.checkWireSafety()
            let deadline = ContinuousClock.now + request.timeout
            let body = try await request.body.prepare()
            defer { body.discard() }
            // The total is known before the first byte goes: progress says "0 of N", not "0".
            if body.length > 0 { request.progress?.uploaded(0, of: body.length) }
            let place = try await admission.enter(
                TransferAdmission.origin(of: request.url), until: deadline, timeout: request.timeout)
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                throw NetworkError(.timedOut, "No complete answer within \(request.timeout).")
            }
            return try await exchange(request, body: body, place: place, timeout: remaining, deadline: request.timeout)
        }

        /// One request and its answer, in its place in libcurl (see ``TransferAdmission``); sent
        /// again on a new connection when the kept-alive one held bytes of an earlier answer
        /// (nothing of the request had been sent).
        private func exchange(
            _ request: HTTPRequest, body: PreparedBody, place: TransferAdmission.Place, timeout: Duration,
            deadline: Duration
        ) async throws -> HTTPResponse {
            let started = ContinuousClock.now
            func transfer(freshConnection: Bool) throws -> (CurlTransfer, Duration) {
                let left = timeout - (ContinuousClock.now - started)
                guard left > .zero else { throw NetworkError(.timedOut, "No complete answer within \(deadline).") }
                let transfer = try CurlTransfer(
                    request: request, body: body, timeout: left, deadline: deadline, tls: options.tls,
                    cookieJar: cookieJar, handles: handles, place: place, freshConnection: freshConnection,
                    keptConnections: loop.keptConnections, faults: faults)
                return (transfer, left)
            }
            do {
                let (first, left) = try transfer(freshConnection: false)
                return try await perform(first, timeout: left)
            } catch is CurlTransfer.UnreadBytes {
                do {
                    let (second, left) = try transfer(freshConnection: true)
                    return try await perform(second, timeout: left)
                } catch is CurlTransfer.UnreadBytes {
                    throw NetworkError(.transport, "The server sent bytes that no request asked for.")
                }
            }
        }

        private func perform(_ transfer: CurlTransfer, timeout: Duration) async throws -> HTTPResponse {
            if transfer.streaming != nil { return try await performStreaming(transfer, timeout: timeout) }
            return try await withTaskCancellationHandler {
                defer { transfer.settle() }
                return try await withCheckedThrowingContinuation { continuation in
                    if transfer.begin(continuation) { loop.submit(transfer) }
                }
            } onCancel: { [loop] in
                if transfer.stop(NetworkError(.cancelled, "The request was cancelled.")) { loop.remove(transfer) }
            }
        }

        /// A transfer whose 2xx body the caller reads as it arrives: answered at the head, then
        /// paused and resumed by the body's reader, and stopped when the reader goes. The deadline
        /// covers the head (and a body read whole); a streamed body has only the reader's idle
        /// timeout.
        private func performStreaming(_ transfer: CurlTransfer, timeout: Duration) async throws -> HTTPResponse {
            transfer.streamControl = (
                resume: { [weak transfer, loop] in if let transfer { loop.resume(transfer) } },
                stop: { [weak transfer, loop] error in
                    if let transfer, transfer.stop(error) { loop.remove(transfer) }
                }
            )
            let deadline = Deadlines.shared.arm(at: .now + timeout) { [weak transfer, loop] in
                let error = NetworkError(.timedOut, "No answer within \(timeout).")
                if let transfer, transfer.stopUnlessStreaming(error) { loop.remove(transfer) }
            }
            defer { Deadlines.shared.disarm(deadline) }
            return try await withTaskCancellationHandler {
                defer { transfer.settle() }
                return try await withCheckedThrowingContinuation { continuation in
                    if transfer.begin(continuation) { loop.submit(transfer) }
                }
            } onCancel: { [loop] in
                if transfer.stopUnlessStreaming(NetworkError(.cancelled, "The request was cancelled.")) {
                    loop.remove(transfer)
                }
            }
        }
    }
#endif
