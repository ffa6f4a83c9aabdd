import Foundation

/// The values of a JSON Lines answer (NDJSON, or a JSON text sequence): see
/// ``NetworkClient/lines(_:options:)``.
public struct JSONLineStream<Payload: Sendable>: AsyncSequence, Sendable {
    /// A decoded line.
    public typealias Element = Payload
    /// What reading throws.
    public typealias Failure = NetworkError

    let client: NetworkClient
    let endpoint: Endpoint<Payload>
    let options: StreamOptions

    /// Makes the iterator: its first `next()` sends the request.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: JSONLineReader(client: client, endpoint: endpoint, options: options))
    }

    /// Reads the values.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: JSONLineReader<Payload>

        /// The next value, or `nil` at the end of the answer.
        /// - Throws: ``NetworkError``.
        public mutating func next() async throws(NetworkError) -> Payload? {
            try await reader.next()
        }

        /// The next value, or `nil` at the end of the answer.
        /// - Parameter actor: The caller's actor.
        /// - Throws: ``NetworkError``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError) -> Payload? {
            try await reader.next(isolation: actor)
        }
    }
}

extension NetworkClient {
    /// Reads an endpoint's answer as JSON Lines (NDJSON, `application/x-ndjson`) or a JSON text
    /// sequence (RFC 7464, `application/json-seq`): one value per line, decoded as the endpoint
    /// decodes a body (`decoding: .json` for plain values; the client's envelope by default),
    /// each handed on as soon as its line is complete. Blank lines and `CR` before `LF` are
    /// skipped; a last line without `LF` counts.
    ///
    /// ```swift
    /// for try await order in client.lines(Endpoint<Order>.get("orders/export", decoding: .json)) {
    ///     try await store.save(order)
    /// }
    /// ```
    ///
    /// The request goes through every layer and its answer is checked as
    /// ``stream(_:options:)``'s is; a line that does not decode throws
    /// ``NetworkError/Code/decodingFailed`` and ends the stream, a line longer than
    /// ``StreamOptions/maximumElementSize`` throws ``NetworkError/Code/responseTooLarge``. A
    /// dropped connection throws: such a stream has no position to continue from.
    /// - Parameters:
    ///   - endpoint: What to send, and how to decode each line.
    ///   - options: The idle timeout, the buffer size and the longest line.
    /// - Returns: The values.
    public nonisolated func lines<Payload>(_ endpoint: Endpoint<Payload>, options: StreamOptions = StreamOptions())
        -> JSONLineStream<Payload>
    {
        JSONLineStream(client: self, endpoint: endpoint, options: options)
    }
}

/// What a ``JSONLineStream``'s iterator does. Used by the one task that iterates.
final class JSONLineReader<Payload: Sendable> {
    private let client: NetworkClient
    private let endpoint: Endpoint<Payload>
    private let options: StreamOptions
    private var parser: JSONLinesParser
    private var body: ResponseBodyStream.Reading?
    /// Values decoded and not read yet.
    private var ready = ReadyQueue<Payload>()
    private var started = false
    private var ended = false
    /// What ends the stream once the values before it are read.
    private var failure: NetworkError?

    init(client: NetworkClient, endpoint: Endpoint<Payload>, options: StreamOptions) {
        self.client = client
        self.endpoint = endpoint
        self.options = options
        self.parser = JSONLinesParser(maximumLineLength: options.maximumElementSize)
    }

    func next(isolation actor: isolated (any Actor)? = #isolation) async throws(NetworkError) -> Payload? {
        while true {
            if let value = ready.next() { return value }
            if let failure {
                self.failure = nil
                throw failure
            }
            guard !ended else { return nil }
            if !started {
                started = true
                do {
                    let streaming = StreamRequest(highWater: options.bufferSize, idleTimeout: options.idleTimeout)
                    body = try await client.stream(endpoint, streaming: streaming).body.reading
                } catch {
                    ended = true
                    throw error
                }
            }
            guard let body else { return nil }
            do throws(NetworkError) {
                guard let piece = try await body.next() else {
                    ended = true
                    self.body = nil
                    if let last = parser.finish() { ready.append(try decode(last)) }
                    continue
                }
                var records: [Data] = []
                var parsing: NetworkError?
                do {
                    try parser.parse(piece, into: &records)
                } catch {
                    parsing = error
                }
                // The lines before a line too long are read first.
                for record in records { ready.append(try decode(record)) }
                if let parsing { throw parsing }
            } catch {
                // The values decoded before the failure are read first.
                ended = true
                failure = error
                self.body?.cancel(error)
                self.body = nil
            }
        }
    }

    private func decode(_ record: Data) throws(NetworkError) -> Payload {
        let answer = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: record)
        return try endpoint.decoding.decode(answer, client.decodingContext)
    }
}
