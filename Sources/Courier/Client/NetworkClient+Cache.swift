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
                        let call = CachedCall(self, endpoint, request, cache, in: scope)
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
                        if let reply = try await call.fromCache(entry, isStale: isStale, as: nil) {
                            continuation.yield(reply)
                        } else {
                            stored = nil
                        }
                    }
                    let reply = try await call.refreshed(stored: stored)
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
        guard let cache = configuration.cache, let call = CachedCall(self, endpoint, request, cache, in: scope) else {
            return try await networkReply(to: endpoint, request: request, in: scope)
        }
        switch endpoint.cachePolicy.kind {
        case .networkOnly:
            return try await networkReply(to: endpoint, request: request, in: scope)
        case .cacheFirst, .http:
            var stored = await call.stored()
            if let entry = stored, call.isFresh(entry) {
                if let reply = try await call.fromCache(entry, as: .hit) { return reply }
                stored = nil
            }
            return try await call.refreshed(stored: stored)
        case .staleWhileRevalidate:
            guard let stored = await call.stored(), case let isStale = !call.isFresh(stored),
                let reply = try await call.fromCache(stored, isStale: isStale, as: isStale ? .stale : .hit)
            else {
                return try await call.refreshed(stored: nil)
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
                    _ = try? await refresh.refreshed(stored: stored)
                }
            }
            return reply
        case .offlineFallback:
            do {
                return try await call.refreshed(stored: await call.stored())
            } catch  where Self.isUnreachable(error) {
                // Read again: what a purge (a logout) removed meanwhile is not shown.
                if let stored = await call.stored(),
                    let reply = try await call.fromCache(stored, isStale: true, as: .offlineFallback)
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
/// scope (in flight, in the session's epoch).
private struct CachedCall<Response: Sendable>: Sendable {
    let client: NetworkClient
    let endpoint: Endpoint<Response>
    private(set) var request: HTTPRequest
    let cache: ResponseCache
    let ticket: ResponseCache.Ticket
    let scope: RequestScope

    /// The call, or `nil` when the request cannot be cached.
    init?(
        _ client: NetworkClient, _ endpoint: Endpoint<Response>, _ request: HTTPRequest, _ cache: ResponseCache,
        in scope: RequestScope
    ) {
        let variant = endpoint.skippedLayers.map(\.rawValue).sorted() + [String(reflecting: Response.self)]
        guard let ticket = cache.ticket(for: request, variant: variant, epoch: scope.epoch) else { return nil }
        (self.client, self.endpoint, self.request, self.cache) = (client, endpoint, request, cache)
        (self.ticket, self.scope) = (ticket, scope)
    }

    private init(_ call: CachedCall, scope: RequestScope) {
        (client, endpoint, request, cache, ticket) = (call.client, call.endpoint, call.request, call.cache, call.ticket)
        // A refresh in the background is no caller's: it is not in the caller's timeline, nor
        // its trace (a trace-context layer starts one of its own).
        request.timeline = nil
        request.chosenTrace = nil
        self.scope = scope
    }

    /// The same call in another scope: a refresh in the background, registered on its own.
    func within(_ scope: RequestScope) -> CachedCall { CachedCall(self, scope: scope) }

    /// The entry stored for the request, if any.
    func stored() async -> CachedResponse? {
        await cache.response(for: ticket, answering: request)
    }

    /// Whether `entry` may be given without asking the network, as the endpoint's policy says.
    func isFresh(_ entry: CachedResponse) -> Bool {
        cache.isFresh(entry, for: endpoint.cachePolicy)
    }

    /// A stored answer given without the network: decoded (see ``decoded(_:isStale:)``), and
    /// refused once the request was cancelled, or the session left its epoch.
    func fromCache(_ entry: CachedResponse, isStale: Bool = false, as outcome: RequestTimeline.CacheOutcome?)
        async throws(NetworkError) -> Reply<Response>?
    {
        guard let reply = await decoded(entry, isStale: isStale) else { return nil }
        try checkScope("the cache was read")
        if let outcome { request.timeline?.cache(outcome) }
        return reply
    }

    /// ``RequestScope/check(_:)``, the error described with the request.
    private func checkScope(_ step: String) throws(NetworkError) {
        do {
            try scope.check(step)
        } catch {
            throw error.describing(request, redactor: client.configuration.redactor)
        }
    }

    /// What a conditional request brought: a new answer, or word that the stored one holds.
    private enum Revalidation: Sendable {
        case answered(Reply<Response>)
        case notModified(HTTPResponse)
    }

    /// The network's answer, stored under the ticket once it has decoded. With a `stored` entry
    /// that has a validator the request asks whether it still holds, and a `304` refreshes and
    /// returns it; a `304` that speaks of another version, or an entry that no longer decodes,
    /// is answered by asking again without condition. An answer saying the resource is gone
    /// (404, 410) removes the entry. Nothing is merged, stored or returned once the session has
    /// left the request's epoch (another user's answer never meets this one's entry).
    func refreshed(stored: CachedResponse?) async throws(NetworkError) -> Reply<Response> {
        let conditional = stored.flatMap { HTTPFreshness.conditional(request, revalidating: $0) }
        let outcome: Revalidation
        do {
            outcome = try await client.perform(conditional ?? request, of: endpoint, in: scope) {
                [client, endpoint, request] response in
                if conditional != nil, response.status == 304 { return .notModified(response) }
                return .answered(try client.decodedReply(response, to: endpoint, for: request))
            }
        } catch {
            if error.code == .httpStatus, [404, 410].contains(error.status) { await cache.remove(ticket) }
            throw error
        }
        switch outcome {
        case .answered(let reply):
            await cache.save(reply.response, answering: request, ticket: ticket)
            try checkScope("the answer was stored")
            request.timeline?.cache(.miss)
            return reply
        case .notModified(let notModified):
            try checkScope("a 304 arrived")
            if let stored, var refreshed = HTTPFreshness.refreshed(stored.response, with: notModified) {
                refreshed.sharedTransfer = notModified.sharedTransfer
                let entry =
                    await cache.save(refreshed, answering: request, ticket: ticket)
                    ?? CachedResponse(refreshed, storedAt: cache.now())
                if let reply = await decoded(entry, isStale: false, isRevalidated: true) {
                    try checkScope("the 304 was merged")
                    request.timeline?.cache(.revalidated)
                    return reply
                }
            } else {
                await cache.remove(ticket)
            }
            return try await self.refreshed(stored: nil)
        }
    }

    /// A stored answer checked and decoded as the network's would be, or `nil` when it no
    /// longer decodes (the endpoint's type changed since, say): then the entry is removed,
    /// unless a newer one took its place meanwhile.
    private func decoded(_ entry: CachedResponse, isStale: Bool, isRevalidated: Bool = false) async -> Reply<Response>?
    {
        do {
            return try client.decodedReply(
                entry.response, to: endpoint, for: request,
                cached: CacheInfo(storedAt: entry.storedAt, isStale: isStale, isRevalidated: isRevalidated))
        } catch {
            if await stored()?.storedAt == entry.storedAt { await cache.remove(ticket) }
            return nil
        }
    }
}
