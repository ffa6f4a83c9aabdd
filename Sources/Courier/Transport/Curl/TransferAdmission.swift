#if os(Linux)
    import Foundation

    /// Lets at most `limit` transfers to one origin into libcurl at once; later requests wait
    /// here, in the order they came, until one ends.
    ///
    /// A transfer in libcurl holds an easy handle and its buffers (tens of kilobytes) even while
    /// it only waits for a connection; a request waiting here holds nothing but its place in
    /// line. So ten thousand requests at once cost memory for the ones that can be on the wire,
    /// not for all of them. A waiting request that is cancelled or reaches its deadline leaves
    /// the line at once.
    ///
    /// An HTTPS origin where no transfer holds a place lets one transfer in first, and the rest
    /// once that transfer's connection is ready (``Place/connectionReady()``): by then libcurl
    /// knows whether the connection carries HTTP/2, and the requests sent at once share it, up
    /// to the server's limit of streams on a connection. (libcurl's own wait for that,
    /// `CURLOPT_PIPEWAIT`, lets a burst open a connection each in 7.88.) A kept-alive connection
    /// is ready at once. If the first transfer ends before its connection is ready (the origin
    /// refuses, or its certificate is not trusted), the rest go at once, so they fail together
    /// rather than one after another. An HTTPS origin also lets in at most
    /// ``streamsPerConnection`` at once (or the connection limit, when that is higher): past the
    /// server's limit of streams, libcurl opens a connection for each request that does not
    /// fit, where waiting here keeps them on one.
    final class TransferAdmission: Sendable {
        /// The most transfers an HTTPS origin lets into libcurl at once, unless the limit is
        /// `Int.max` or the connection limit is higher: 100, the fewest streams RFC 9113 asks a
        /// server to let one HTTP/2 connection carry (nginx lets 128, Apache and nghttp2 100),
        /// and libcurl's own default. An HTTPS origin that speaks HTTP/1.1 gets no more than its
        /// connections on the wire, so 100 holds none of them back.
        static let streamsPerConnection = 100

        /// One transfer's place; the next in line gets it when this is released.
        final class Place: Sendable {
            private let admission: TransferAdmission
            /// The origin the place is for.
            let origin: String

            fileprivate init(_ admission: TransferAdmission, origin: String) {
                self.admission = admission
                self.origin = origin
            }

            /// The transfer's connection is ready (its TLS handshake done, or kept alive): an
            /// origin that let one transfer in lets the rest in now.
            func connectionReady() { admission.open(origin) }

            deinit { admission.hand(origin) }
        }

        /// Where a request in line stands.
        private enum Ticket {
            /// In line; its task has not yet begun to wait.
            case reserved
            case waiting(CheckedContinuation<Void, any Error>)
            /// Given a place before its task began to wait.
            case admitted
            /// Left (cancelled, timed out) before its task began to wait.
            case left(NetworkError)
        }

        /// A class, changed in place under the lock: a struct taken out of the dictionary and put
        /// back would copy every ticket on each change. `@unchecked Sendable`: reached only
        /// under the lock.
        private final class Line: @unchecked Sendable {
            /// Transfers holding a place.
            var admitted = 0
            /// Whether the line lets `capacity` transfers in; until then (an HTTPS origin with no
            /// connection known to be ready), one.
            var open: Bool
            /// How many transfers the open line lets into libcurl at once.
            let capacity: Int
            var tickets: [UInt64: Ticket] = [:]
            /// Tickets reserved or waiting.
            var queued = 0
            /// The last ticket served, and the last one given out.
            var served: UInt64 = 0
            var issued: UInt64 = 0

            init(open: Bool, capacity: Int) {
                self.open = open
                self.capacity = capacity
            }
        }

        /// How many transfers to one origin may be in libcurl at once.
        let limit: Int
        /// How many transfers to one HTTPS origin may be in libcurl at once.
        let secureLimit: Int
        private let lines = Locked<[String: Line]>([:])

        /// - Parameters:
        ///   - limit: How many transfers to one origin may be in libcurl at once; `Int.max` lets
        ///     every one in at once.
        ///   - connections: The transport's connection limit per host (0 for none): an HTTPS
        ///     origin lets in up to ``streamsPerConnection``, or this many when it is more.
        init(limit: Int, connections: Int = 0) {
            self.limit = max(1, limit)
            secureLimit = min(self.limit, max(Self.streamsPerConnection, connections))
        }

        /// How many requests wait for a place now, all origins together (for tests).
        var waitingCount: Int { lines.withLock { $0.values.reduce(0) { $0 + $1.queued } } }

        /// What requests to one origin share a line by: scheme, host and port, in lowercase and
        /// with the scheme's default port filled in.
        static func origin(of url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
        }

        /// A place for one transfer to `origin`, at once or when one is free.
        /// - Parameters:
        ///   - origin: The request's origin (see ``origin(of:)``).
        ///   - deadline: When the request's time is up.
        ///   - timeout: The request's whole timeout, for the error.
        /// - Throws: ``NetworkError/Code/cancelled`` when the task is cancelled while it waits,
        ///   ``NetworkError/Code/timedOut`` at the deadline.
        func enter(_ origin: String, until deadline: ContinuousClock.Instant, timeout: Duration) async throws -> Place {
            let ticket: UInt64? = lines.withLock { lines in
                let line = lines[origin] ?? makeLine(for: origin)
                lines[origin] = line
                if line.admitted < (line.open ? line.capacity : 1), line.queued == 0 {
                    line.admitted += 1
                    return nil
                }
                line.issued += 1
                line.queued += 1
                line.tickets[line.issued] = .reserved
                return line.issued
            }
            if let ticket { try await wait(origin: origin, ticket: ticket, until: deadline, timeout: timeout) }
            return Place(self, origin: origin)
        }

        /// A new line for `origin`: see the type's description.
        private func makeLine(for origin: String) -> Line {
            guard limit != Int.max, origin.hasPrefix("https://") else { return Line(open: true, capacity: limit) }
            return Line(open: false, capacity: secureLimit)
        }

        private func wait(origin: String, ticket: UInt64, until deadline: ContinuousClock.Instant, timeout: Duration)
            async throws
        {
            let leave: @Sendable (NetworkError) -> Void = { [self] error in
                let (waiter, handsOn) = lines.withLock { lines -> (CheckedContinuation<Void, any Error>?, Bool) in
                    guard let line = lines[origin], let state = line.tickets[ticket] else { return (nil, false) }
                    defer { Self.forget(line, at: origin, in: &lines) }
                    switch state {
                    case .reserved:
                        line.queued -= 1
                        line.tickets[ticket] = .left(error)
                        return (nil, false)
                    case .waiting(let continuation):
                        line.queued -= 1
                        line.tickets[ticket] = nil
                        return (continuation, false)
                    case .admitted:
                        line.tickets[ticket] = .left(error)
                        return (nil, true)
                    case .left:
                        return (nil, false)
                    }
                }
                waiter?.resume(throwing: error)
                // A place given to a request that left goes to the next in line.
                if handsOn { hand(origin) }
            }
            let timer = Deadlines.shared.arm(at: deadline) {
                leave(
                    NetworkError(
                        .timedOut, "No complete answer within \(timeout): the request waited for a connection."))
            }
            defer { Deadlines.shared.disarm(timer) }
            try await withTaskCancellationHandler {
                // A failure (built on the deadline's thread) went through the lock; taking it
                // orders that for the thread sanitizer (see CONTRIBUTING, "Sanitizers").
                defer { lines.withLock { _ in } }
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let ready: Result<Void, NetworkError>? = lines.withLock { lines in
                        // Every ticket is in its line until its task has begun to wait.
                        guard let line = lines[origin], let state = line.tickets[ticket] else {
                            return .failure(NetworkError(.cancelled, "The request left the line for a connection."))
                        }
                        defer { Self.forget(line, at: origin, in: &lines) }
                        switch state {
                        case .reserved:
                            line.tickets[ticket] = .waiting(continuation)
                            return nil
                        case .admitted:
                            line.tickets[ticket] = nil
                            return .success(())
                        case .left(let error):
                            line.tickets[ticket] = nil
                            return .failure(error)
                        case .waiting:
                            return nil  // cannot happen: a ticket begins to wait once
                        }
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                leave(NetworkError(.cancelled, "The request was cancelled while it waited for a connection."))
            }
        }

        /// Drops the line of an origin nothing holds or waits for.
        private static func forget(_ line: Line, at origin: String, in lines: inout [String: Line]) {
            if line.admitted == 0, line.tickets.isEmpty { lines[origin] = nil }
        }

        /// One transfer ended (its place released): the next in line, if any, gets the place.
        /// When the line is not open yet, the transfer that left never had its connection ready
        /// (it failed, or was cancelled): the line opens, and the rest go at once.
        fileprivate func hand(_ origin: String) {
            var opened: [CheckedContinuation<Void, any Error>] = []
            let next: CheckedContinuation<Void, any Error>? = lines.withLock { lines in
                guard let line = lines[origin] else { return nil }
                defer { Self.forget(line, at: origin, in: &lines) }
                guard line.open else {
                    line.admitted -= 1
                    opened = openLine(line)
                    return nil
                }
                switch Self.handOver(in: line) {
                case .nobody:
                    line.admitted -= 1
                    return nil
                case .admitted: return nil
                case .resume(let continuation): return continuation
                }
            }
            next?.resume()
            for next in opened { next.resume() }
        }

        /// An origin's connection is ready: its line lets in as many as its capacity allows.
        fileprivate func open(_ origin: String) {
            let admitted = lines.withLock { lines in lines[origin].map { $0.open ? [] : openLine($0) } ?? [] }
            for next in admitted { next.resume() }
        }

        /// Opens `line` and gives places to as many in it as its capacity allows. Returns the
        /// continuations to resume, once the lock is released.
        private func openLine(_ line: Line) -> [CheckedContinuation<Void, any Error>] {
            line.open = true
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while line.admitted < line.capacity {
                switch Self.handOver(in: line) {
                case .nobody: return admitted
                case .admitted: line.admitted += 1
                case .resume(let continuation):
                    line.admitted += 1
                    admitted.append(continuation)
                }
            }
            return admitted
        }

        /// What giving a place to the next in line did.
        private enum Handover {
            /// No one waits.
            case nobody
            /// A request whose task has not begun to wait got it; it finds itself admitted.
            case admitted
            /// A waiting request got it; its task goes on when this is resumed.
            case resume(CheckedContinuation<Void, any Error>)
        }

        /// Gives a place to the next request in line, if any.
        private static func handOver(in line: Line) -> Handover {
            while line.served < line.issued {
                line.served += 1
                switch line.tickets[line.served] {
                case .waiting(let continuation):
                    line.queued -= 1
                    line.tickets[line.served] = nil
                    return .resume(continuation)
                case .reserved:
                    line.queued -= 1
                    line.tickets[line.served] = .admitted
                    return .admitted
                case .admitted, .left, nil:
                    continue  // left the line (or is being answered)
                }
            }
            return .nobody
        }
    }
#endif
