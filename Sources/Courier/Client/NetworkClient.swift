import Foundation

/// The entry point: sends typed ``Endpoint`` values to one backend and returns their payloads.
///
/// ```swift
/// let client = NetworkClient(configuration: .init(baseURL: URL(string: "https://api.example.com/v1/")!))
/// let orders = try await client.send(.orders(page: 1))
/// ```
///
/// The actor's state is the requests in flight (for ``cancelAll()`` and the activity count),
/// kept in a lock-based registry so a request never waits for the actor. Building, sending and
/// decoding run off the actor, so many concurrent ``send(_:)`` calls do not queue behind one
/// executor.
public actor NetworkClient {
    /// The settings the client was created with.
    public nonisolated let configuration: Configuration
    private nonisolated let chain: InterceptorChain
    private nonisolated let encoder: JSONEncoder
    private nonisolated let base: URLJoiner.Base
    nonisolated let decodingContext: DecodingContext
    nonisolated let validation: ResponseValidation
    nonisolated let gate: ReachabilityGate?
    /// The configuration's session, or one nobody signs in to.
    nonisolated let session: Session

    /// The latest exchanges, when the configuration keeps them.
    nonisolated let trafficLog: TrafficLog?
    private nonisolated let inFlight = InFlightRegistry()
    /// The open WebSockets, each in the session epoch it was opened in.
    private nonisolated let openSockets = InFlightRegistry()
    /// How many times ``cancelAll()`` ran: a WebSocket that opened meanwhile is closed.
    private nonisolated let cancelAllCount = Locked<UInt64>(0)
    private nonisolated let shared = SharedTransfers()
    /// Whether a request is given a trace as it is made (the trace-context layer is installed).
    private nonisolated let carriesTraces: Bool

    /// Creates a client.
    /// - Parameter configuration: Base URL, timeouts, envelope format, session, cache, validation
    ///   and transport.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.session = configuration.session ?? .signedOut()
        // Every transport sends one request at a time; the client keeps the rest of the contract.
        let transport = SendContract(configuration.transport ?? Configuration.defaultTransport())
        let log = configuration.keptExchanges > 0 ? TrafficLog(capacity: configuration.keptExchanges) : nil
        self.trafficLog = log
        self.carriesTraces = configuration.interceptors.contains {
            $0.layer == .traceContext || $0 is TraceContextInterceptor
        }
        self.chain = InterceptorChain(
            interceptors: (configuration.session.map { [SessionLayer(session: $0)] } ?? [])
                + configuration.interceptors,
            transport: log.map { ArchivingTransport(inner: transport, log: $0) } ?? transport)
        self.encoder = configuration.encoder.copy()
        self.base = URLJoiner.Base(configuration.baseURL)
        self.decodingContext = DecodingContext(
            decoder: configuration.decoder.copy(addingUserInfo: [
                .envelopeFormat: configuration.envelope,
                .envelopeNumberKeys: Set(
                    configuration.interceptors.compactMap { ($0 as? SigningInterceptor)?.serverTimeField }),
            ]),
            envelope: configuration.envelope)
        self.gate = configuration.reachability.map {
            ReachabilityGate(monitor: $0, policy: configuration.reachabilityPolicy)
        }
        self.validation = ResponseValidation(
            acceptableStatusCodes: configuration.acceptableStatusCodes,
            acceptableContentTypes: Set(configuration.acceptableContentTypes.map { $0.lowercased() }),
            decoder: decodingContext.decoder)
        session.attach(self)
    }

    /// Sends an endpoint and returns its decoded payload.
    ///
    /// A request whose task is already cancelled is never sent. Cancelling the calling task, or
    /// ``cancelAll()``, stops the transfer; for a transfer shared with identical requests in
    /// flight (``Endpoint/sharingIdenticalRequests(_:)``), the caller stops waiting at once and
    /// the transfer stops when no caller waits for it.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload.
    /// - Throws: ``NetworkError``, always: ``NetworkError/Code/cancelled``,
    ///   ``NetworkError/Code/timedOut``, ``NetworkError/Code/httpStatus``,
    ///   ``NetworkError/Code/business``, ``NetworkError/Code/decodingFailed``, …
    public nonisolated func send<Response>(_ endpoint: Endpoint<Response>) async throws(NetworkError) -> Response {
        // Straight to the full `reply`: each call between adds a frame to every request in flight.
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: nil).value
    }

    /// Sends an endpoint and returns its decoded payload together with the answer it came in:
    /// status, headers, timings, and the envelope's message and other fields.
    ///
    /// It sends, checks and decodes as ``send(_:)`` does, and throws the same errors.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload and its answer.
    /// - Throws: ``NetworkError``, as ``send(_:)`` does.
    public nonisolated func reply<Response>(to endpoint: Endpoint<Response>) async throws(NetworkError)
        -> Reply<Response>
    {
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: nil)
    }

    /// ``reply(to:)`` for a request of session epoch `epoch` (a layer's own request), or of the
    /// epoch now when `nil`; the session's own (`isSessionWork`) is not cancelled by
    /// ``cancelAll()``.
    nonisolated func reply<Response>(
        to endpoint: Endpoint<Response>, in epoch: SessionEpoch?, isSessionWork: Bool = false
    ) async throws(NetworkError) -> Reply<Response> {
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: epoch, isSessionWork: isSessionWork)
    }

    /// ``reply(to:in:isSessionWork:)`` for `endpoint`'s request built already (by
    /// ``makeRequest(_:)``).
    nonisolated func reply<Response>(
        to endpoint: Endpoint<Response>, request: HTTPRequest, in epoch: SessionEpoch?, isSessionWork: Bool = false
    ) async throws(NetworkError) -> Reply<Response> {
        let request = observing(request)
        let entry = register(in: epoch, isSessionWork: isSessionWork)
        defer { finish(entry) }
        do {
            let scope = try await scope(of: entry, in: epoch, request)
            let reply: Reply<Response>
            if usesCache(endpoint) {
                reply = try await cachedReply(to: endpoint, request: request, in: scope)
            } else {
                reply = try await networkReply(to: endpoint, request: request, in: scope)
            }
            request.timeline?.end(reply.response, decoder: decodingContext.decoder)
            return reply
        } catch {
            let failure = await afterItsEpoch(error, of: entry)
            request.timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
            throw failure
        }
    }

    /// Whether `endpoint`'s answer goes through the client's cache. Not inlined: the cache read
    /// would take room in the frame of the `async` function asking.
    @inline(never)
    nonisolated func usesCache<Response>(_ endpoint: Endpoint<Response>) -> Bool {
        configuration.cache != nil && endpoint.cachePolicy != .networkOnly
    }

    /// `request` with a recorder of its timeline, when the client has observers (which hear
    /// that it started).
    nonisolated func observing(_ request: HTTPRequest) -> HTTPRequest {
        guard !configuration.observers.isEmpty else { return request }
        var request = request
        request.timeline = TimelineRecorder(observers: configuration.observers, request: request)
        return request
    }

    /// Sends a built request through the layers and the transport, checks the answer and
    /// decodes it.
    nonisolated func networkReply<Response>(
        to endpoint: Endpoint<Response>, request: HTTPRequest, in scope: RequestScope
    ) async throws(NetworkError) -> Reply<Response> {
        try await perform(request, of: endpoint, in: scope) { [self] response in
            try decodedReply(response, to: endpoint, for: request)
        }
    }

    /// An answer checked (status, content type) and decoded as `endpoint` says.
    nonisolated func decodedReply<Response>(
        _ response: HTTPResponse, to endpoint: Endpoint<Response>, for request: HTTPRequest, cached: CacheInfo? = nil
    ) throws(NetworkError) -> Reply<Response> {
        let start = request.timeline?.now
        defer { if let start { request.timeline?.decoded(since: start) } }
        try validation.validate(
            response, method: request.method, checksContentType: endpoint.decoding.checksContentType)
        return Reply(
            value: try endpoint.decoding.decode(response, decodingContext), response: response,
            decoder: decodingContext.decoder, cached: cached)
    }

    /// What the reachability monitor says now (``ReachabilityStatus/unknown`` without one).
    public nonisolated var reachabilityStatus: ReachabilityStatus {
        configuration.reachability?.status ?? .unknown
    }

    /// The reachability status now, then every change, for an "offline" or "waiting" banner.
    /// Without a monitor, one `unknown` and then nothing.
    /// - Returns: The stream.
    public nonisolated func reachabilityUpdates() -> AsyncStream<ReachabilityStatus> {
        configuration.reachability?.statusUpdates() ?? AsyncStream { $0.yield(.unknown) }
    }

    /// Cancels every request in flight, including those waiting to be online, for a token, or
    /// still reading the cache (none is sent, nor given an answer it read from the cache
    /// without the network). Each one throws ``NetworkError/Code/cancelled``. No request sent
    /// afterwards shares a transfer with one that was in flight (see
    /// ``Endpoint/sharingIdenticalRequests(_:)``). The session goes on as it was (a refresh
    /// under way still stores its token): on logout call ``Session/logOut()``, which cancels
    /// these requests too.
    public nonisolated func cancelAll() {
        cancelAllCount.withLock { $0 += 1 }
        shared.detachAll()
        inFlight.cancelAll()
        openSockets.cancelAll()
    }

    /// Cancels the requests that began in a session epoch before `epoch`, and closes the
    /// WebSockets opened in one: a logout's part.
    nonisolated func cancelWork(before epoch: UInt64) {
        inFlight.cancel(before: epoch)
        openSockets.cancel(before: epoch)
    }

    /// Keeps an open WebSocket of session epoch `epoch` until the returned closure runs (when
    /// the socket goes): ``cancelAll()`` and the end of its epoch close it for good, and drop what
    /// it holds for its reader, even after the server closed it.
    nonisolated func keep(_ socket: WebSocket, in epoch: UInt64) -> @Sendable () -> Void {
        let entry = openSockets.add(epoch: epoch)
        entry.attach { [session, weak socket] in
            let error =
                session.epochNumber == epoch
                ? NetworkError(.cancelled, "The WebSocket was closed by cancelAll().")
                : session.endError(of: epoch, while: "the WebSocket was open")
            socket?.stop(error, code: .goingAway)
        }
        return { [openSockets] in openSockets.remove(entry) }
    }

    /// The client's layers around `transport` instead of the client's transport.
    nonisolated func chain(through transport: any Transport) -> InterceptorChain {
        InterceptorChain(interceptors: chain.interceptors, transport: transport)
    }

    /// The certificate authorities and pins of the client's transport, for its WebSockets;
    /// refused for a transport whose settings a WebSocket cannot know (it would connect
    /// without the pins, or reach the network for a transport that never does).
    nonisolated func webSocketTLS(for request: HTTPRequest) throws(NetworkError) -> TLSOptions {
        switch configuration.transport {
        case nil: return TLSOptions()
        case let session as URLSessionTransport: return session.tls
        default: break
        }
        #if os(Linux)
            if let curl = configuration.transport as? CurlTransport { return curl.options.tls }
        #endif
        throw NetworkError(
            .invalidRequest,
            "A WebSocket opens with CurlTransport or URLSessionTransport only, not the client's transport."
        ).describing(request, redactor: configuration.redactor)
    }

    /// How many times ``cancelAll()`` has run.
    nonisolated var cancelAllGeneration: UInt64 { cancelAllCount.withLock { $0 } }

    /// The number of WebSockets the client keeps for its session, for tests.
    package nonisolated var openWebSocketCount: Int { openSockets.count }

    /// The number of requests in flight, for a network activity indicator.
    public nonisolated var activeRequestCount: Int { inFlight.count }

    /// The number of callers waiting for a transfer they share with identical requests, for
    /// tests.
    package nonisolated var sharedTransferWaiters: Int { shared.waiterCount }

    /// A stream of the number of requests in flight: the current number first, then every
    /// change. Each call returns a new stream; it ends when the consumer stops iterating.
    /// - Returns: The stream.
    public nonisolated func activityUpdates() -> AsyncStream<Int> {
        inFlight.activity.stream()
    }

    // MARK: - Pipeline (off the actor)

    /// What identical requests in flight are matched by: the request as its endpoint describes
    /// it, its headers, deadline, body limit, whether it may be sent twice, the layers it
    /// skips, and the session epoch and user it belongs to. `nil` for one that never shares a
    /// transfer (a download, an upload with progress, a file or multipart body, or a request
    /// whose user is not known).
    private nonisolated func sharingKey(
        _ request: HTTPRequest, skipping skipped: Set<InterceptorLayer>, in epoch: SessionEpoch
    ) -> [String]? {
        guard request.progress == nil, let owner = epoch.owner, let parts = RequestDigest.parts(of: request) else {
            return nil
        }
        // Each part is one element, so no two lists of parts are equal unless every part is.
        return parts + [String(request.headers.fields.count)]
            + request.headers.fields.map { "\($0.name.lowercased()): \($0.value)" }
            + skipped.map(\.rawValue).sorted() + [
                "\(request.timeout)", request.maximumResponseBodySize.map(String.init) ?? "no limit",
                request.isIdempotent ? "idempotent" : "once", String(epoch.number), owner,
            ]
    }

    /// Registers a request as in flight, from now: in session epoch `epoch`, or the current one.
    nonisolated func register(in epoch: SessionEpoch? = nil, isSessionWork: Bool = false) -> InFlightRegistry.Entry {
        inFlight.add(epoch: epoch?.number ?? session.epochNumber, isSessionWork: isSessionWork)
    }

    /// Ends a registered request.
    nonisolated func finish(_ entry: InFlightRegistry.Entry) {
        inFlight.remove(entry)
    }

    /// The scope of the request registered as `entry`: in session epoch `epoch`, or in the
    /// current one (the first request reads the session's store). Refused when the request was
    /// cancelled meanwhile, or the session left the epoch it was registered in.
    nonisolated func scope(of entry: InFlightRegistry.Entry, in epoch: SessionEpoch?, _ request: HTTPRequest)
        async throws(NetworkError) -> RequestScope
    {
        let current: SessionEpoch
        if let epoch { current = epoch } else { current = await session.beginEpoch() }
        let scope = RequestScope(epoch: current, entry: entry)
        do throws(NetworkError) {
            try scope.check("it began")
        } catch {
            throw error.describing(request, redactor: configuration.redactor)
        }
        return scope
    }

    /// `error`, once what a logout, a login as someone else or the backend's end of the session
    /// left was stopped and emptied, when it ended the request's epoch: such a request throws
    /// only after the caches are empty (unless its caller's task is cancelled meanwhile).
    nonisolated func afterItsEpoch(_ error: NetworkError, of entry: InFlightRegistry.Entry) async -> NetworkError {
        if error.code == .cancelled || error.code == .sessionExpired { await session.settled(entry.epoch) }
        return error
    }

    /// Builds an endpoint's request against the base URL, refusing one whose task is already
    /// cancelled.
    nonisolated func makeRequest<Response>(_ endpoint: Endpoint<Response>) throws(NetworkError) -> HTTPRequest {
        var request = try endpoint.makeRequest(base: base, encoder: encoder, defaultTimeout: configuration.timeout)
        request.maximumResponseBodySize = endpoint.maximumResponseBodySize ?? configuration.maximumResponseBodySize
        request.redactor = configuration.redactor
        request.notes.call = ExchangeNotes.nextCall()
        if carriesTraces { request.chosenTrace = TraceContext.current ?? .random() }
        guard !Task.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled before it was sent.").describing(
                request, redactor: configuration.redactor)
        }
        return request
    }

    /// One exchange of `request`: through the reachability gate, the layers and the transport;
    /// then the cache entries its answer made stale are dropped, before its caller hears of it.
    /// A shared transfer's answer is marked with its order, as old as the transfer whichever
    /// caller stores it.
    ///
    /// A request waiting in flight keeps the frame of every function it waits in, so the
    /// seldom-taken steps (a trace, a cache) are functions of their own.
    private nonisolated func exchange(
        _ request: HTTPRequest, context: InterceptorContext, skipping skipped: Set<InterceptorLayer>, isShared: Bool
    ) async throws -> HTTPResponse {
        let mark = isShared ? sharedTransferMark() : nil
        if let gate { try await gate.admit(request.url, timeline: request.timeline) }
        if isShared { request.timeline?.startedSharedTransfer() }
        var response: HTTPResponse
        do {
            if request.isTraced {
                response = try await sendTraced(request, context: context, skipping: skipped)
            } else {
                response = try await chain.send(request, context: context, skipping: skipped)
            }
        } catch {
            throw NetworkError.wrapping(error)
        }
        await invalidateCache(after: request, answer: response, epoch: context.epoch)
        // Only the transfer that shares an answer marks it: a mark on a recorded answer a layer
        // or transport hands back stands for nothing here. (Unchanged, the answer is not copied.)
        if mark != nil || response.sharedTransfer != nil { response.sharedTransfer = mark }
        return response
    }

    /// The mark of a shared transfer's answer: the cache's order now.
    @inline(never)
    private nonisolated func sharedTransferMark() -> SharedTransferMark {
        SharedTransferMark(order: configuration.cache?.nextOrder())
    }

    /// `request` through the layers and the transport in its trace: the layers' own requests
    /// (a token refresh, a login) are in the same trace.
    @inline(never)
    private nonisolated func sendTraced(
        _ request: HTTPRequest, context: InterceptorContext, skipping skipped: Set<InterceptorLayer>
    ) async throws -> HTTPResponse {
        guard let trace = request.chosenTrace else {
            return try await chain.send(request, context: context, skipping: skipped)
        }
        return try await TraceContext.$current.withValue(trace) {
            try await chain.send(request, context: context, skipping: skipped)
        }
    }

    /// Drops the cache entries `response` made stale, when the client has a cache.
    @inline(never)
    private nonisolated func invalidateCache(
        after request: HTTPRequest, answer response: HTTPResponse, epoch: SessionEpoch
    )
        async
    {
        await configuration.cache?.invalidate(after: request, answer: response, epoch: epoch)
    }

    /// Runs a built request through the reachability gate, the interceptors and the transport
    /// in a task of its own, and turns the answer into a value with `finish`. Cancelling the
    /// caller, ``cancelAll()`` or a logout cancels that task. An identical request in flight
    /// that shares its transfer (``Endpoint/sharesIdenticalRequests``) answers this one too:
    /// then the task is the transfer's, and a caller that is cancelled stops waiting for it (see
    /// ``SharedTransfers``). An answer that arrives after the request's scope ended (a logout)
    /// is not given: the scope is checked before `finish` and after it, and a value made while
    /// it ended is handed to `discard` (a downloaded file is removed) instead of the caller.
    /// - Throws: ``NetworkError``, described with the request.
    nonisolated func perform<Response, Value: Sendable>(
        _ request: HTTPRequest, of endpoint: Endpoint<Response>, in scope: RequestScope,
        discard: (@Sendable (Value) -> Void)? = nil,
        finish: @escaping @Sendable (HTTPResponse) throws -> Value
    ) async throws(NetworkError) -> Value {
        let skipped = endpoint.skippedLayers
        let sharing = endpoint.sharesIdenticalRequests ? sharingKey(request, skipping: skipped, in: scope.epoch) : nil
        let context = InterceptorContext(
            client: self, epoch: scope.epoch, skipping: skipped, decodeAhead: endpoint.decoding.decodeAhead)
        do {
            try scope.check("it was about to be sent")
        } catch {
            throw error.describing(request, redactor: configuration.redactor)
        }
        let transfer: @Sendable () async throws -> HTTPResponse = { [self] in
            try await exchange(request, context: context, skipping: skipped, isShared: sharing != nil)
        }
        // Nothing of an answer that arrives after the request's scope ended is kept: a download
        // is not moved into place, and no value is made; one made while it ended is discarded.
        let finishing: @Sendable (HTTPResponse) throws -> Value = { response in
            // An envelope a layer decoded ahead is taken by this caller's decoding, or dropped
            // once it finished: a shared answer's other callers do not keep it alive (one of
            // them finishing first costs the taker a decoding of its own).
            defer { response.forgetDecodedAhead() }
            try scope.check("its answer arrived")
            let value = try finish(response)
            do {
                try scope.check("its answer was read")
            } catch {
                discard?(value)
                throw error
            }
            return value
        }
        let result: Result<Value, any Error>
        if let sharing {
            result = await sharedResult(sharing, of: request, in: scope, transfer: transfer, finishing: finishing)
        } else {
            let started = startedTask(priority: Task.currentPriority) { try finishing(try await transfer()) }
            scope.entry.attach { started.cancel() }
            result = await withTaskCancellationHandler {
                await started.result
            } onCancel: {
                started.cancel()
            }
        }
        do {
            return try result.get()
        } catch {
            throw await failure(error, of: request, in: scope)
        }
    }

    // The shared path and the failure are functions of their own, not inlined: a request
    // waiting in flight keeps the frame of `perform`, which then holds neither's values.

    /// The outcome of the transfer `sharing` names, shared with identical requests: it runs in
    /// a task of its own, and this caller waits for it here.
    @inline(never)
    private nonisolated func sharedResult<Value: Sendable>(
        _ sharing: [String], of request: HTTPRequest, in scope: RequestScope,
        transfer: @escaping @Sendable () async throws -> HTTPResponse,
        finishing: @escaping @Sendable (HTTPResponse) throws -> Value
    ) async -> Result<Value, any Error> {
        // A caller that joined a transfer in flight waited for it, however it ended.
        let timeline = request.timeline
        let start = timeline?.now
        var joined = false
        defer { if joined, let start { timeline?.joined(since: start) } }
        do {
            let response = try await shared.response(
                for: sharing, cancellation: scope.entry.attach, start: transfer, joining: { joined = true })
            return Result { try finishing(response) }
        } catch {
            return .failure(error)
        }
    }

    /// What a request that failed with `error` throws: cancelled by the end of its epoch, the
    /// end's error (sessionExpired, with the answer that ended it, when the backend did), once
    /// the caches are empty.
    @inline(never)
    nonisolated func failure(_ error: any Error, of request: HTTPRequest, in scope: RequestScope) async
        -> NetworkError
    {
        var thrown = NetworkError.wrapping(error)
        if thrown.code == .cancelled, !scope.epoch.isCurrent {
            await session.settled(scope.epoch.number)
            thrown = session.endError(of: scope.epoch.number, while: "the request was under way")
        }
        return thrown.describing(request, redactor: configuration.redactor)
    }
}
