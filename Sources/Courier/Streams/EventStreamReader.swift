import Foundation

/// What an ``EventStream``'s iterator does: connects, parses, decodes, and connects again. Used
/// by the one task that iterates (an iterator is never shared), so it needs no lock.
final class EventStreamReader<Payload: Sendable> {
    private let client: NetworkClient
    private let endpoint: Endpoint<Payload>
    private let options: StreamOptions
    private let entry: InFlightRegistry.Entry
    private var parser: EventStreamParser
    private var body: ResponseBodyStream.Reading?
    /// Events decoded and not read yet.
    private var ready = ReadyQueue<ServerSentEvent<Payload>>()
    /// The session epoch of the first connection: every later one belongs to it too.
    private var epoch: SessionEpoch?
    /// Whether the stream has connected before (every later connection waits first).
    private var hasConnected = false
    /// Attempts in a row that failed (a connection that gave an event, or stayed up for
    /// ``StreamOptions/Reconnection/healthyAfter``, starts the count again).
    private var attempts = 0
    private var connectedAt = ContinuousClock.now
    /// Whether the connection gave an event.
    private var deliveredSinceConnect = false
    private var lastError: NetworkError?
    /// An event's business code the session acts on before the next connection, and the
    /// connection's request that carried the credential it was for.
    private var sessionAnswer: HTTPResponse?
    private var lastStreaming: StreamRequest?
    /// Whether the last connection ended on a session answer before it gave any event: a
    /// second one in a row ends the stream rather than renew the session in a loop.
    private var renewedWithoutEvent = false
    /// The IDs of events read, and whether the connection is still replaying events that came
    /// before its `Last-Event-ID` (skipped when their ID was read already).
    private var recentIDs = RecentIDs()
    private var replaying = false
    /// The last event ID to resume after: the parser's, or the ID of an event that closed the
    /// connection (the parser may have read past it).
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
        body?.cancel(NetworkError(.cancelled, "The event stream was dropped."))
        if !ended { client.finish(entry) }
    }

    func next(isolation actor: isolated (any Actor)? = #isolation) async throws(NetworkError)
        -> ServerSentEvent<Payload>?
    {
        while true {
            // After `cancelAll()` or a logout, nothing more is handed out.
            if entry.isCancelled, !ended {
                ready.removeAll()
                throw end(cancelled())
            }
            if let event = ready.next() { return event }
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
            var events: [EventStreamParser.Event] = []
            do {
                try parser.parse(piece, into: &events)
            } catch {
                failure = error
            }
            // The events the piece completed are read first, then a failure ends the stream.
            do {
                try accept(events, parsedWhole: failure == nil)
            } catch {
                failure = failure ?? error
            }
            if failure != nil {
                body?.cancel(failure ?? NetworkError(.cancelled, "The event stream ended."))
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
        // A reader too far behind on a transport that cannot pause (Linux URLSession) loses
        // nothing by connecting again from its last event.
        if let error, !Self.isPassing(error), error.code != .responseTooLarge { throw end(error) }
        if deliveredSinceConnect || ContinuousClock.now - connectedAt >= options.reconnection.healthyAfter {
            attempts = 0
        }
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
        // `cancelAll()` or a logout ends the stream's time in flight at once, not at the next read.
        let (response, scope) = try await client.openStream(
            endpoint, streaming: streaming, entry: entry, in: epoch,
            onCancel: { [client, entry] in client.finish(entry) })
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
        deliveredSinceConnect = false
        replaying = true
        body = response.body.reading
    }

    /// Decodes the events a piece completed. An event whose business code the session acts on
    /// (a refresh or log-in code) closes the connection: the next one is sent once the session
    /// has renewed, and goes on after that event.
    /// - Parameter parsedWhole: Whether the parser read the whole piece (so its last event ID
    ///   is where the stream stands).
    private func accept(_ events: [EventStreamParser.Event], parsedWhole: Bool) throws(NetworkError) {
        for event in events {
            resumeID = event.id
            if event.setsID, !event.id.isEmpty {
                // An event sent again after a reconnection, before the new ones, is read once.
                if replaying, recentIDs.contains(event.id) { continue }
                replaying = false
                recentIDs.insert(event.id)
            }
            let answer = HTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"], body: Data(event.data.utf8))
            let payload: Payload
            do {
                payload = try endpoint.decoding.decode(answer, client.decodingContext)
            } catch {
                // Only an envelope carries a code; one the session acts on renews it first, once
                // in a row without an event between.
                guard error.businessCode != nil, !(renewedWithoutEvent && !deliveredSinceConnect), let epoch,
                    client.sessionActs(on: answer, of: endpoint, in: epoch)
                else { throw error }
                renewedWithoutEvent = !deliveredSinceConnect
                sessionAnswer = answer
                body?.cancel(NetworkError(.cancelled, "The connection closed for the session to renew."))
                body = nil
                return
            }
            deliveredSinceConnect = true
            renewedWithoutEvent = false
            ready.append(
                ServerSentEvent(
                    type: event.type, id: event.id.isEmpty ? nil : event.id, data: payload, text: event.data))
        }
        // An `id:` without data moves the stream on too.
        if parsedWhole { resumeID = parser.lastEventID }
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

    func contains(_ id: String) -> Bool { set.contains(id) }

    /// Adds `id`, forgetting the oldest past ``capacity``.
    mutating func insert(_ id: String) {
        guard set.insert(id).inserted else { return }
        if order.count < capacity {
            order.append(id)
        } else {
            set.remove(order[next])
            order[next] = id
            next = (next + 1) % capacity
        }
    }
}

extension NetworkClient {
    /// Whether the session acts on `answer` (a refresh or log-in code, or an ask-the-user code,
    /// which ends the session as in any answer) for a request of `endpoint` in `epoch`: never
    /// for an endpoint that skips the session's layer.
    nonisolated func sessionActs<Response>(
        on answer: HTTPResponse, of endpoint: Endpoint<Response>, in epoch: SessionEpoch
    ) -> Bool {
        guard configuration.session != nil, !endpoint.skippedLayers.contains(.token) else { return false }
        let context = InterceptorContext(client: self, epoch: epoch, skipping: endpoint.skippedLayers)
        return session.reaction(to: answer, context, logIns: !endpoint.skippedLayers.contains(.reLogin)) != nil
    }
}
