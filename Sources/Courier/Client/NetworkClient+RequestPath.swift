import Foundation

// The request path, top to bottom: `reply(to:request:in:isSessionWork:)` lists its steps, and the
// functions below come in the order a request takes them.
extension NetworkClient {
    /// The request path, for `endpoint`'s request built already (by ``makeRequest(_:)``), in a
    /// session epoch (`epoch`, a layer's own request) or the one now (`nil`); the session's own
    /// work (`isSessionWork`) is not cancelled by ``cancelAll()``. Every request takes it,
    /// whatever the transport:
    ///
    /// 1. **Built** (``makeRequest(_:)``): the endpoint against the base URL, with its body,
    ///    limits and trace; refused when its task is cancelled.
    /// 2. **Observed and registered in flight** (``observing(_:)``, ``register(in:isSessionWork:)``):
    ///    its timeline starts, and ``cancelAll()`` and a logout reach it from now.
    /// 3. **Scoped** (``scope(of:in:_:)``) to the session's epoch, which every later step checks.
    /// 4. **The cache** (``cachedReply(to:request:in:)``), when the endpoint's policy uses it: a
    ///    stored answer, the network's (asked with a condition when the entry has a validator),
    ///    or both; the network's answer is stored.
    /// 5. **The network** (``perform(_:of:in:discard:finish:)``): shared with identical requests
    ///    in flight or in a task of its own; in it (``exchange(_:context:skipping:isShared:)``) the
    ///    reachability gate, the layers (``InterceptorChain``: the session's, then the app's), the
    ///    send contract (``SendContract``: cancellation, wire safety, the body, the deadline,
    ///    redirects, response limits) around the transport, which sends one request per
    ///    redirect, and the cache entries the answer made stale dropped. A layer may send again
    ///    (a retry, a refreshed token), and the cache may ask twice (a `304` whose entry went).
    /// 6. **Checked and decoded** (``decodedReply(_:to:for:cached:)``): status and media type
    ///    (``ResponseValidation``), then the endpoint's decoding; the scope is checked before
    ///    and after, so no value of a session that ended is given.
    /// 7. **Ended**: the timeline hears the answer or the failure; a failure is described with the
    ///    request (``failure(_:of:in:)``), and thrown once what a logout left was emptied
    ///    (``afterItsEpoch(_:of:)``).
    ///
    /// The steps are functions of their own because a request waiting in flight keeps the frame
    /// of every function it waits in: one frame holding every step's values would cost each
    /// waiting request more memory (the benchmark's `S20m` row).
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

    /// `request` with a recorder of its timeline, when the client has observers (which hear
    /// that it started).
    nonisolated func observing(_ request: HTTPRequest) -> HTTPRequest {
        guard !configuration.observers.isEmpty else { return request }
        var request = request
        request.timeline = TimelineRecorder(observers: configuration.observers, request: request)
        return request
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

    /// Whether `endpoint`'s answer goes through the client's cache. Not inlined: the cache read
    /// would take room in the frame of the `async` function asking.
    @inline(never)
    nonisolated func usesCache<Response>(_ endpoint: Endpoint<Response>) -> Bool {
        configuration.cache != nil && endpoint.cachePolicy != .networkOnly
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

    /// `error`, once what a logout, a login as someone else or the backend's end of the session
    /// left was stopped and emptied, when it ended the request's epoch: such a request throws
    /// only after the caches are empty (unless its caller's task is cancelled meanwhile).
    nonisolated func afterItsEpoch(_ error: NetworkError, of entry: InFlightRegistry.Entry) async -> NetworkError {
        if error.code == .cancelled || error.code == .sessionExpired { await session.settled(entry.epoch) }
        return error
    }
}
