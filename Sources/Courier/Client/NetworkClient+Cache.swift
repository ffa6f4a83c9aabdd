import Foundation

extension NetworkClient {
    /// The answer stored for an endpoint, if any, then the network's: the "cached, then
    /// refreshed" screen in one loop.
    ///
    /// ```swift
    /// for try await reply in client.updates(for: .orders(page: 1)) {
    ///     show(reply.value)
    ///     if reply.cached?.isStale == true { showMessage("Saved orders; fresh ones are on their way.") }
    /// }
    /// ```
    ///
    /// The first element is the stored answer, when the client has a cache and one decodes;
    /// ``Reply/cached`` says when it was stored and whether it is stale by the endpoint's policy.
    /// The next is the network's answer (or the stored one, confirmed by a `304`), which is
    /// stored for next time; then the sequence ends. Any policy but ``CachePolicy/networkOnly``
    /// (the default, which never reads or writes the cache) works, within the rules of
    /// ``ResponseCache``; without a cache, with that policy, or for a request that cannot be
    /// cached, the sequence is the network's answer only.
    ///
    /// When the network fails, the loop throws the ``NetworkError`` after the stored answer, so
    /// the screen keeps it and can say why it is not fresh. Leaving the loop, or cancelling its
    /// task, cancels the request.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The sequence of one or two replies; it throws only ``NetworkError``.
    public nonisolated func updates<Response>(for endpoint: Endpoint<Response>) -> AsyncThrowingStream<
        Reply<Response>, any Error
    > {
        AsyncThrowingStream { continuation in
            // Registered now, as the stream is made: a cancelAll() or a logout before its task
            // runs stops it.
            let entry = register()
            let task = Task { [self] in
                defer { finish(entry) }
                var timeline: TimelineRecorder?
                do throws(NetworkError) {
                    let request = observing(try makeRequest(endpoint))
                    timeline = request.timeline
                    let scope = try await scope(of: entry, in: nil, request)
                    guard usesCache(endpoint), let cache = configuration.cache,
                        let call = CachedCall(endpoint, request, cache, in: scope)
                    else {
                        let reply = try await networkReply(to: endpoint, request: request, in: scope)
                        timeline?.end(reply.response, decoder: decodingContext.decoder)
                        continuation.yield(reply)
                        continuation.finish()
                        return
                    }
                    var stored = await call.stored()
                    if let entry = stored {
                        let isStale = !call.isFresh(entry)
                        // The timeline's cache outcome is the network's answer's (a miss or a 304).
                        if let reply = try await fromCache(entry, of: call, isStale: isStale, as: nil) {
                            continuation.yield(reply)
                        } else {
                            stored = nil
                        }
                    }
                    let reply = try await refreshed(call, stored: stored)
                    timeline?.end(reply.response, decoder: decodingContext.decoder)
                    continuation.yield(reply)
                    continuation.finish()
                } catch {
                    timeline?.end(nil, failure: error, decoder: decodingContext.decoder)
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Answers an endpoint whose policy uses the client's cache: from the cache, the network,
    /// or both, as the policy says. A request that cannot be cached (see
    /// ``ResponseCache/ticket(for:variant:epoch:)``) goes to the network only.
    nonisolated func cachedReply<Response>(
        to endpoint: Endpoint<Response>, request: HTTPRequest, in scope: RequestScope
    ) async throws(NetworkError) -> Reply<Response> {
        guard let cache = configuration.cache, let call = CachedCall(endpoint, request, cache, in: scope) else {
            return try await networkReply(to: endpoint, request: request, in: scope)
        }
        switch endpoint.cachePolicy.kind {
        case .networkOnly:
            return try await networkReply(to: endpoint, request: request, in: scope)
        case .cacheFirst, .http:
            var stored = await call.stored()
            if let entry = stored, call.isFresh(entry) {
                if let reply = try await fromCache(entry, of: call, as: .hit) { return reply }
                stored = nil
            }
            return try await refreshed(call, stored: stored)
        case .staleWhileRevalidate:
            guard let stored = await call.stored(), case let isStale = !call.isFresh(stored),
                let reply = try await fromCache(stored, of: call, isStale: isStale, as: isStale ? .stale : .hit)
            else {
                return try await refreshed(call, stored: nil)
            }
            if isStale {
                // The refresh belongs to no caller: cancelling this one does not stop it
                // (cancelAll() and a logout do, also before it starts), a failure leaves the stale
                // entry in place, and callers that find the entry stale at once share one refresh
                // when the endpoint shares identical requests.
                let entry = register(in: scope.epoch)
                let refresh = call.within(RequestScope(epoch: scope.epoch, entry: entry))
                Task.detached { [self] in
                    defer { finish(entry) }
                    _ = try? await refreshed(refresh, stored: stored)
                }
            }
            return reply
        case .offlineFallback:
            do {
                return try await refreshed(call, stored: await call.stored())
            } catch  where Self.isUnreachable(error) {
                // Read again: what a purge (a logout) removed meanwhile is not shown.
                if let stored = await call.stored(),
                    let reply = try await fromCache(stored, of: call, isStale: true, as: .offlineFallback)
                {
                    return reply
                }
                throw error
            }
        }
    }

    /// Whether `error` says the server could not be reached: offline, a connection that failed,
    /// a deadline that passed, also as the cause of a failed token fetch.
    private nonisolated static func isUnreachable(_ error: NetworkError) -> Bool {
        var current: NetworkError? = error
        while let failure = current {
            if [.offline, .transport, .timedOut].contains(failure.code) { return true }
            current = failure.underlying as? NetworkError
        }
        return false
    }
}

/// One request answered with the help of the cache: its endpoint, its cache ticket, and its
/// scope (in flight, in the session's epoch). The client asks the cache and the network for it
/// (``NetworkClient/refreshed(_:stored:)``); the call itself reaches neither.
struct CachedCall<Response: Sendable>: Sendable {
    let endpoint: Endpoint<Response>
    private(set) var request: HTTPRequest
    let cache: ResponseCache
    let ticket: ResponseCache.Ticket
    private(set) var scope: RequestScope

    /// The call, or `nil` when the request cannot be cached.
    init?(_ endpoint: Endpoint<Response>, _ request: HTTPRequest, _ cache: ResponseCache, in scope: RequestScope) {
        let variant = endpoint.skippedLayers.map(\.rawValue).sorted() + [String(reflecting: Response.self)]
        guard let ticket = cache.ticket(for: request, variant: variant, epoch: scope.epoch) else { return nil }
        (self.endpoint, self.request, self.cache, self.ticket, self.scope) = (endpoint, request, cache, ticket, scope)
    }

    /// The same call in another scope: a refresh in the background, registered on its own. It
    /// is no caller's: it is not in the caller's timeline, nor its trace (a trace-context layer
    /// starts one of its own).
    func within(_ scope: RequestScope) -> CachedCall {
        var call = self
        call.request.timeline = nil
        call.request.chosenTrace = nil
        call.scope = scope
        return call
    }

    /// The entry stored for the request, if any.
    func stored() async -> CachedResponse? {
        await cache.response(for: ticket, answering: request)
    }

    /// Whether `entry` may be given without asking the network, as the endpoint's policy says.
    func isFresh(_ entry: CachedResponse) -> Bool {
        cache.isFresh(entry, for: endpoint.cachePolicy)
    }
}

/// What a conditional request brought: a new answer, or word that the stored one holds.
private enum Revalidation<Response: Sendable>: Sendable {
    case answered(Reply<Response>)
    case notModified(HTTPResponse)
}

extension NetworkClient {
    /// A stored answer given without the network: decoded (see ``decoded(_:of:isStale:isRevalidated:)``),
    /// and refused once the request was cancelled, or the session left its epoch.
    nonisolated func fromCache<Response>(
        _ entry: CachedResponse, of call: CachedCall<Response>, isStale: Bool = false,
        as outcome: RequestTimeline.CacheOutcome?
    ) async throws(NetworkError) -> Reply<Response>? {
        guard let reply = await decoded(entry, of: call, isStale: isStale) else { return nil }
        try check(call, "the cache was read")
        if let outcome { call.request.timeline?.cache(outcome) }
        return reply
    }

    /// The network's answer to `call`, stored under its ticket once it has decoded. With a
    /// `stored` entry that has a validator the request asks whether it still holds, and a `304`
    /// refreshes and returns it; a `304` that speaks of another version, or an entry that no
    /// longer decodes, is answered by asking again without condition. An answer saying the
    /// resource is gone (404, 410) removes the entry. Nothing is merged, stored or returned once
    /// the session has left the request's epoch (another user's answer never meets this one's
    /// entry).
    nonisolated func refreshed<Response>(_ call: CachedCall<Response>, stored: CachedResponse?)
        async throws(NetworkError) -> Reply<Response>
    {
        let (endpoint, request, cache) = (call.endpoint, call.request, call.cache)
        let conditional = stored.flatMap { HTTPFreshness.conditional(request, revalidating: $0) }
        let outcome: Revalidation<Response>
        do {
            outcome = try await perform(conditional ?? request, of: endpoint, in: call.scope) { [self] response in
                if conditional != nil, response.status == 304 { return .notModified(response) }
                return .answered(try decodedReply(response, to: endpoint, for: request))
            }
        } catch {
            if error.code == .httpStatus, [404, 410].contains(error.status) { await cache.remove(call.ticket) }
            throw error
        }
        switch outcome {
        case .answered(let reply):
            await cache.save(reply.response, answering: request, ticket: call.ticket)
            try check(call, "the answer was stored")
            request.timeline?.cache(.miss)
            return reply
        case .notModified(let notModified):
            try check(call, "a 304 arrived")
            if let stored, var refreshed = HTTPFreshness.refreshed(stored.response, with: notModified) {
                refreshed.sharedTransfer = notModified.sharedTransfer
                let entry =
                    await cache.save(refreshed, answering: request, ticket: call.ticket)
                    ?? CachedResponse(refreshed, storedAt: cache.now())
                if let reply = await decoded(entry, of: call, isStale: false, isRevalidated: true) {
                    try check(call, "the 304 was merged")
                    request.timeline?.cache(.revalidated)
                    return reply
                }
            } else {
                await cache.remove(call.ticket)
            }
            return try await refreshed(call, stored: nil)
        }
    }

    /// ``RequestScope/check(_:)`` of `call`'s scope, the error described with its request.
    private nonisolated func check<Response>(_ call: CachedCall<Response>, _ step: String) throws(NetworkError) {
        do {
            try call.scope.check(step)
        } catch {
            throw error.describing(call.request, redactor: configuration.redactor)
        }
    }

    /// A stored answer checked and decoded as the network's would be, or `nil` when it no
    /// longer decodes (the endpoint's type changed since, say): then the entry is removed,
    /// unless a newer one took its place meanwhile.
    private nonisolated func decoded<Response>(
        _ entry: CachedResponse, of call: CachedCall<Response>, isStale: Bool, isRevalidated: Bool = false
    ) async -> Reply<Response>? {
        do {
            return try decodedReply(
                entry.response, to: call.endpoint, for: call.request,
                cached: CacheInfo(storedAt: entry.storedAt, isStale: isStale, isRevalidated: isRevalidated))
        } catch {
            if await call.stored()?.storedAt == entry.storedAt { await call.cache.remove(call.ticket) }
            return nil
        }
    }
}
