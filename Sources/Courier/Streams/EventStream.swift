import Foundation

/// One Server-Sent Event, its data decoded as the endpoint decodes an answer's body.
public struct ServerSentEvent<Payload: Sendable>: Sendable {
    /// The event's type: its `event:` field, `message` when it has none.
    public var type: String
    /// The last event ID when the event arrived (its own `id:`, or an earlier event's), or
    /// `nil` when the stream has none. The stream sends it back as `Last-Event-ID` when it
    /// connects again.
    public var id: String?
    /// The data, decoded.
    public var data: Payload
    /// The data as it came: its `data:` lines joined with line feeds.
    public var text: String

    /// Creates an event (for tests and previews: a stream makes its own).
    /// - Parameters:
    ///   - type: The event's type.
    ///   - id: The last event ID, if any.
    ///   - data: The decoded data.
    ///   - text: The data as it came.
    public init(type: String = "message", id: String? = nil, data: Payload, text: String = "") {
        self.type = type
        self.id = id
        self.data = data
        self.text = text
    }
}

/// The events of a `text/event-stream` answer, read as the WHATWG HTML standard says, and
/// the connections behind them: see ``NetworkClient/events(_:options:lastEventID:)``.
public struct EventStream<Payload: Sendable>: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent<Payload>
    /// What reading throws.
    public typealias Failure = NetworkError

    let client: NetworkClient
    let endpoint: Endpoint<Payload>
    let options: StreamOptions
    let lastEventID: String?

    /// Makes the iterator: its first `next()` connects.
    public func makeAsyncIterator() -> Iterator {
        Iterator(
            reader: EventStreamReader(client: client, endpoint: endpoint, options: options, lastEventID: lastEventID))
    }

    /// Reads the events.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: EventStreamReader<Payload>

        /// The next event, or `nil` when the stream ended (a 204, or a close the options do not
        /// reconnect after).
        /// - Throws: ``NetworkError``.
        public mutating func next() async throws(NetworkError) -> ServerSentEvent<Payload>? {
            try await reader.next()
        }

        /// The next event, or `nil` when the stream ended.
        /// - Parameter actor: The caller's actor.
        /// - Throws: ``NetworkError``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError)
            -> ServerSentEvent<Payload>?
        {
            try await reader.next(isolation: actor)
        }
    }
}

extension NetworkClient {
    /// Reads an endpoint's Server-Sent Events (`text/event-stream`): chat and AI answers token
    /// by token, live updates. Each event's data is decoded as the endpoint decodes a body:
    /// inside the client's envelope by default, so a business code in an event acts as in any
    /// answer (a refresh or log-in code renews the session, then the stream connects again and
    /// goes on); `decoding: .json` for plain JSON, `.text` for the data as it is.
    ///
    /// ```swift
    /// for try await event in client.events(Endpoint<Token>.get("chat/42/answer", decoding: .json)) {
    ///     print(event.data.text, terminator: "")
    /// }
    /// ```
    ///
    /// When the connection drops, the stream connects again after a pause (see
    /// ``StreamOptions/Reconnection``), sending `Last-Event-ID`; events the server sends again
    /// with an ID already seen are skipped. Every connection goes through every layer afresh:
    /// a fresh token (refreshed when the server refuses the old one), a new signature, the
    /// common parameters. The stream stops on a 204, throws on an answer the client does not
    /// accept (a 4xx other than 401, 408 and 429, a business code, a content type other than
    /// `text/event-stream`), and never connects again once its reader's task is cancelled, or
    /// after ``cancelAll()`` or a logout.
    /// - Parameters:
    ///   - endpoint: What to send, and how to decode each event's data.
    ///   - options: The idle timeout (no byte for that long counts as a drop), the largest
    ///     event, and the reconnection policy.
    ///   - lastEventID: The ID of the last event read before (in an earlier run of the app):
    ///     sent as `Last-Event-ID` from the first connection on.
    /// - Returns: The events.
    public nonisolated func events<Payload>(
        _ endpoint: Endpoint<Payload>, options: StreamOptions = StreamOptions(), lastEventID: String? = nil
    ) -> EventStream<Payload> {
        EventStream(client: self, endpoint: endpoint, options: options, lastEventID: lastEventID)
    }
}
