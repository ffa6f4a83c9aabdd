import Foundation

/// An answer whose body arrives as the server sends it: the status and header first, then
/// ``body``, an `AsyncSequence` of byte pieces.
///
/// ```swift
/// let answer = try await client.stream(.get("exports/today"))
/// for try await piece in answer.body { try output.write(contentsOf: piece) }
/// ```
///
/// Only one task reads the body, once (a second reader throws
/// ``NetworkError/Code/invalidRequest``). Reading is what moves the transfer on: a reader that
/// stops pulling makes the transport stop reading the socket, so memory stays bounded (see
/// ``StreamOptions/bufferSize`` for Linux `URLSession`). Releasing the answer and its body,
/// cancelling the reading task, ``NetworkClient/cancelAll()`` or a logout closes the connection
/// at once.
public struct StreamedResponse: Sendable {
    /// The HTTP status code (2xx: other answers throw).
    public let status: Int
    /// The header fields.
    public let headers: HTTPHeaders
    /// The URL that answered, after any redirects.
    public let url: URL?
    /// The body, piece by piece.
    public let body: ResponseBodyStream

    init(_ response: HTTPResponse, body: ResponseBodyStream) {
        self.status = response.status
        self.headers = response.headers
        self.url = response.url
        self.body = body
    }
}

/// The body of a ``StreamedResponse``: pieces of bytes in the order they arrived, ending when
/// the answer is complete, or throwing the ``NetworkError`` that broke it
/// (``NetworkError/Code/transport`` for a lost connection, ``NetworkError/Code/timedOut`` after
/// the idle timeout, ``NetworkError/Code/cancelled``).
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A piece of the body.
    public typealias Element = Data
    /// What reading throws.
    public typealias Failure = NetworkError

    let reading: Reading

    init(_ reading: Reading) { self.reading = reading }

    /// A body already complete, for an answer the transport read whole.
    init(whole body: Data) {
        let channel = ByteChannel(highWater: Swift.max(body.count, 1))
        channel.push(body)
        channel.finish()
        self.init(Reading(channel))
    }

    /// Makes the iterator. The body is read once: a second iterator throws
    /// ``NetworkError/Code/invalidRequest`` and leaves the body to the first.
    public func makeAsyncIterator() -> Iterator { Iterator(reading: reading, owns: reading.claim()) }

    /// Reads the pieces.
    public struct Iterator: AsyncIteratorProtocol {
        let reading: Reading
        /// Whether this iterator is the body's reader.
        let owns: Bool

        /// The next piece, or `nil` at the end of a complete body.
        /// - Throws: ``NetworkError``.
        public mutating func next() async throws(NetworkError) -> Data? {
            guard owns else { throw Self.refused }
            return try await reading.next()
        }

        /// The next piece, or `nil` at the end of a complete body.
        /// - Parameter actor: The caller's actor.
        /// - Throws: ``NetworkError``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError) -> Data? {
            guard owns else { throw Self.refused }
            return try await reading.next()
        }

        private static var refused: NetworkError {
            NetworkError(.invalidRequest, "The stream's body is read once, and another reader has it.")
        }
    }

    /// A body's channel and what ends when it does (its request in flight): ended once, by the
    /// end of the body, an error, or the last reference going away unread (which also closes the
    /// connection: a layer that drops a streamed answer stops its transfer).
    ///
    /// `@unchecked Sendable`: `onEnd` and `ended` are guarded by `lock`.
    final class Reading: @unchecked Sendable {
        let channel: ByteChannel
        private let lock = NSLock()
        private var onEnd: (@Sendable () -> Void)?
        private var ended = false
        private var claimed = false
        /// Who is told of each piece read and of the end (a recorder of traffic), once each.
        private var observer: (@Sendable (StreamEvent) -> Void)?

        init(_ channel: ByteChannel) {
            self.channel = channel
        }

        /// Makes the caller the body's one reader; `false` when another is already.
        func claim() -> Bool {
            lock.withLock {
                defer { claimed = true }
                return !claimed
            }
        }

        /// Sets what runs when the body ends; at once when it has ended already.
        func whenEnded(_ action: @escaping @Sendable () -> Void) {
            let now = lock.withLock {
                if !ended { onEnd = action }
                return ended
            }
            if now { action() }
        }

        deinit {
            let dropped = NetworkError(.cancelled, "The stream was dropped before its end.")
            channel.cancel(dropped)
            report(.end(dropped))
            end()
        }

        /// Tells `observer` of each piece read from now on, and of the end.
        func observe(_ observer: @escaping @Sendable (StreamEvent) -> Void) {
            lock.withLock { self.observer = observer }
        }

        func next() async throws(NetworkError) -> Data? {
            do {
                guard let piece = try await channel.next() else {
                    report(.end(nil))
                    end()
                    return nil
                }
                report(.piece(piece))
                return piece
            } catch {
                // A copied iterator refused while the first waits leaves the body to it.
                if channel.isEnded {
                    report(.end(error))
                    end()
                }
                throw error
            }
        }

        /// Stops the transfer and ends the body with `error`.
        func cancel(_ error: NetworkError) {
            channel.cancel(error)
            report(.end(error))
            end()
        }

        private func report(_ event: StreamEvent) {
            let observer = lock.withLock {
                let observer = self.observer
                if case .end = event { self.observer = nil }
                return observer
            }
            observer?(event)
        }

        private func end() {
            let action = lock.withLock {
                defer { onEnd = nil }
                ended = true
                return onEnd
            }
            action?()
        }
    }
}
