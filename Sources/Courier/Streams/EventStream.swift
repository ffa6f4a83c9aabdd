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

/// What an ``EventStream``'s iterator does: connects, parses, decodes, and connects again. Used
/// by the one task that iterates (an iterator is never shared), so it needs no lock.
final class EventStreamReader<Payload: Sendable> {
    private let client: NetworkClient
    private let endpoint: Endpoint<Payload>
    private let options: StreamOptions
    private let entry: InFlightRegistry.Entry
    private var parser: EventStreamParser
    private var body: ResponseBodyStream.Reading?
    private var ready: [ServerSentEvent<Payload>] = []
    private var epoch: SessionEpoch?
    /// Whether the stream has connected before (every later connection waits first).
    private var hasConnected = false
    /// Failed attempts since the last healthy connection.
    private var attempts = 0
    private var connectedAt = ContinuousClock.now
    private var lastError: NetworkError?
    /// An event's business code the session acts on before the next connection, and the
    /// connection's request that carried the credential it was for.
    private var sessionAnswer: HTTPResponse?
    private var lastStreaming: StreamRequest?
    private var recentIDs = RecentIDs()
    /// The last event ID of the last event read or acted on: what the next connection resumes
    /// after (the parser may have read further, past an event that closed the connection).
    private var resumeID: String
    private var ended = false
    /// What ends the stream once the events before it are read.
    private var failure: NetworkError?

    init(client: NetworkClient, endpoint: Endpoint<Payload>, options: StreamOptions, lastEventID: String?) {
        self.client = client
        self.endpoint = endpoint.sharingIdenticalRequests(false)
        self.options = options
        self.entry = client.register()
        self.parser = EventStreamParser(
            maximumLineLength: options.maximumElementSize, maximumEventSize: options.maximumElementSize,
            lastEventID: lastEventID ?? "")
        self.resumeID = lastEventID ?? ""
    }

    deinit {
        body = nil
        client.finish(entry)
    }

    func next(isolation actor: isolated (any Actor)? = #isolation) async throws(NetworkError)
        -> ServerSentEvent<Payload>?
    {
        while true {
            if !ready.isEmpty { return ready.removeFirst() }
            if let failure {
                self.failure = nil
                throw failure
            }
            guard !ended else { return nil }
            guard let current = body else {
                try await connect()
                continue
            }
            let piece: Data?
            do {
                piece = try await current.next()
            } catch {
                try dropped(error)
                continue
            }
            guard let piece else {
                try dropped(nil)
                continue
            }
            do {
                try accept(parser.parse(piece))
            } catch {
                // The events decoded before the failure are read first.
                failure = error
                body?.cancel(error)
                _ = end(keepingReady: true)
            }
        }
    }

    /// Ends the stream: closes the connection and leaves the client's requests in flight.
    private func end(_ error: NetworkError? = nil, keepingReady: Bool = false) -> NetworkError {
        ended = true
        body = nil
        if !keepingReady { ready.removeAll() }
        client.finish(entry)
        return error ?? NetworkError(.cancelled, "The event stream ended.")
    }

    /// The connection ended: cleanly (`nil`) or with `error`. One that can be tried again is
    /// (by ``connect()``); anything else ends the stream.
    private func dropped(_ error: NetworkError?) throws(NetworkError) {
        body = nil
        if let error, !Self.isPassing(error) { throw end(error) }
        if ContinuousClock.now - connectedAt >= options.reconnection.healthyAfter { attempts = 0 }
        lastError = error
        attempts += 1
    }

    /// Whether another connection may go better: a lost connection, silence past the idle
    /// timeout, or a status the standard retries.
    private static func isPassing(_ error: NetworkError) -> Bool {
        switch error.code {
        case .transport, .timedOut, .offline: return true
        case .httpStatus:
            guard let status = error.status else { return false }
            return status >= 500 || [401, 408, 429].contains(status)
        default: return false
        }
    }

    /// Connects, after the pause the policy gives when this is not the first connection;
    /// tries again while the failures pass and the policy allows.
    private func connect(isolation actor: isolated (any Actor)? = #isolation) async throws(NetworkError) {
        var paused = false
        while true {
            guard !Task.isCancelled, !entry.isCancelled else { throw end(cancelled()) }
            if hasConnected, sessionAnswer == nil, !paused {
                if let limit = options.reconnection.maximumAttempts, attempts > limit {
                    // A server that closed cleanly ends the stream; one that failed, with its error.
                    guard let lastError else {
                        _ = end()
                        return
                    }
                    throw end(lastError)
                }
                try await pause(options.reconnection.delay(attempt: attempts, retry: parser.retry) { .random(in: $0) })
                paused = true
                continue
            }
            paused = false
            do {
                hasConnected = true
                try await open()
                return
            } catch {
                guard !ended, Self.isPassing(error) else { throw ended ? error : end(error) }
                lastError = error
                attempts += 1
            }
        }
    }

    /// Waits before connecting again; `cancelAll()`, a logout or the reader's cancellation end
    /// the wait at once.
    private func pause(_ duration: Duration, isolation actor: isolated (any Actor)? = #isolation)
        async throws(NetworkError)
    {
        let sleeper = Task { try await Task.sleep(for: duration) }
        entry.attach { sleeper.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await sleeper.value
            } onCancel: {
                sleeper.cancel()
            }
        } catch {
            throw end(cancelled())
        }
    }

    /// The error of a stream stopped by its reader, `cancelAll()`, or the end of its session.
    private func cancelled() -> NetworkError {
        if let epoch, !epoch.isCurrent {
            return client.session.endError(of: epoch.number, while: "the event stream was open")
        }
        return NetworkError(.cancelled, "The event stream was cancelled.")
    }

    private func open(isolation actor: isolated (any Actor)? = #isolation) async throws(NetworkError) {
        var endpoint = endpoint
        endpoint.headers["Accept"] = "text/event-stream"
        endpoint.headers["Cache-Control"] = "no-store"
        if !resumeID.isEmpty { endpoint.headers["Last-Event-ID"] = resumeID }
        let streaming = StreamRequest(
            highWater: options.bufferSize, idleTimeout: options.idleTimeout, sessionAnswer: sessionAnswer,
            previouslySent: lastStreaming?.sent)
        sessionAnswer = nil
        let (response, scope) = try await client.openStream(endpoint, streaming: streaming, entry: entry, in: epoch)
        epoch = scope.epoch
        lastStreaming = streaming
        if response.status == 204 {
            _ = end()
            return
        }
        let media = HTTPResponse(status: response.status, headers: response.headers).mediaType
        guard media == "text/event-stream" else {
            var error = NetworkError(
                .unacceptableContentType,
                "The answer is not an event stream: its Content-Type is \(media.map { "\"\($0)\"" } ?? "missing").")
            error.status = response.status
            error.headers = response.headers
            throw end(error)
        }
        // A new connection starts a new event; the last ID and the server's pause carry over.
        parser = parser.continued(after: resumeID)
        connectedAt = .now
        body = response.body.reading
    }

    /// Decodes the events a piece completed. An event whose business code the session acts on
    /// (a refresh or log-in code) closes the connection: the next one is sent once the session
    /// has renewed, and the events after it come again.
    private func accept(_ events: [EventStreamParser.Event]) throws(NetworkError) {
        for event in events {
            resumeID = event.id
            if event.setsID, !event.id.isEmpty {
                guard recentIDs.insert(event.id) else { continue }
            }
            let answer = HTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"], body: Data(event.data.utf8))
            let payload: Payload
            do {
                payload = try endpoint.decoding.decode(answer, client.decodingContext)
            } catch {
                // Only an envelope carries a code; one the session acts on renews it first.
                guard error.businessCode != nil, let epoch, client.sessionActs(on: answer, of: endpoint, in: epoch)
                else { throw error }
                sessionAnswer = answer
                body?.cancel(NetworkError(.cancelled, "The connection closed for the session to renew."))
                body = nil
                return
            }
            ready.append(
                ServerSentEvent(
                    type: event.type, id: event.id.isEmpty ? nil : event.id, data: payload, text: event.data))
        }
    }
}

extension EventStreamParser {
    /// A parser for the next connection: the same bounds and reconnection time, and
    /// `lastEventID` as the last event ID.
    func continued(after lastEventID: String) -> EventStreamParser {
        var next = EventStreamParser(
            maximumLineLength: maximumLineLength, maximumEventSize: maximumEventSize, lastEventID: lastEventID)
        next.retry = retry
        return next
    }
}

/// The IDs of the last events read, to skip an event a server sends again after a reconnect.
struct RecentIDs {
    private var set: Set<String> = []
    private var order: [String] = []
    private var next = 0
    let capacity = 256

    /// Adds `id`; `false` when it was there already.
    mutating func insert(_ id: String) -> Bool {
        guard set.insert(id).inserted else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            set.remove(order[next])
            order[next] = id
            next = (next + 1) % capacity
        }
        return true
    }
}

extension NetworkClient {
    /// Whether the session acts on `answer` (a refresh or log-in code) for a request of
    /// `endpoint` in `epoch`: never for an endpoint that skips the session's layer.
    nonisolated func sessionActs<Response>(
        on answer: HTTPResponse, of endpoint: Endpoint<Response>, in epoch: SessionEpoch
    )
        -> Bool
    {
        guard configuration.session != nil, !endpoint.skippedLayers.contains(.token) else { return false }
        let context = InterceptorContext(client: self, epoch: epoch, skipping: endpoint.skippedLayers)
        return session.reaction(to: answer, context, logIns: !endpoint.skippedLayers.contains(.reLogin)) != nil
    }
}
