import Foundation

extension NetworkClient {
    /// Answers an endpoint whose policy uses `cache`: from the cache, the network, or both, as
    /// the policy says. A request that cannot be cached (see ``ResponseCache/ticket(for:variant:)``)
    /// goes to the network only.
    nonisolated func reply<Response>(to endpoint: Endpoint<Response>, request: HTTPRequest, cache: ResponseCache)
        async throws(NetworkError) -> Reply<Response>
    {
        let variant = endpoint.skippedLayers.map(\.rawValue).sorted() + [String(reflecting: Response.self)]
        guard let ticket = await cache.ticket(for: request, variant: variant) else {
            return try await networkReply(to: endpoint, request: request)
        }
        switch endpoint.cachePolicy.kind {
        case .networkOnly:
            return try await networkReply(to: endpoint, request: request)
        case .cacheFirst(let maxAge):
            if let stored = await cache.response(for: ticket, answering: request),
                cache.isFresh(stored, maxAge: maxAge),
                let reply = await cachedReply(stored, to: endpoint, request: request, cache: cache, ticket: ticket)
            {
                return reply
            }
            return try await storedReply(to: endpoint, request: request, cache: cache, ticket: ticket)
        case .staleWhileRevalidate(let maxAge):
            guard let stored = await cache.response(for: ticket, answering: request) else {
                return try await storedReply(to: endpoint, request: request, cache: cache, ticket: ticket)
            }
            let isStale = !cache.isFresh(stored, maxAge: maxAge)
            guard
                let reply = await cachedReply(
                    stored, to: endpoint, request: request, cache: cache, ticket: ticket, isStale: isStale)
            else {
                return try await storedReply(to: endpoint, request: request, cache: cache, ticket: ticket)
            }
            if isStale {
                // The refresh belongs to no caller: cancelling this one does not stop it
                // (cancelAll() does), a failure leaves the stale entry in place, and callers
                // that find the entry stale at once share one refresh.
                let refresh = endpoint.sharingIdenticalRequests(true)
                Task.detached { [self] in
                    _ = try? await storedReply(to: refresh, request: request, cache: cache, ticket: ticket)
                }
            }
            return reply
        case .offlineFallback:
            do {
                return try await storedReply(to: endpoint, request: request, cache: cache, ticket: ticket)
            } catch  where Self.isUnreachable(error) {
                if let stored = await cache.response(for: ticket, answering: request),
                    let reply = await cachedReply(
                        stored, to: endpoint, request: request, cache: cache, ticket: ticket, isStale: true)
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

    /// The network's answer, stored under its ticket once it has decoded; an answer saying the
    /// resource is gone (404, 410) removes the entry.
    private nonisolated func storedReply<Response>(
        to endpoint: Endpoint<Response>, request: HTTPRequest, cache: ResponseCache, ticket: ResponseCache.Ticket
    ) async throws(NetworkError) -> Reply<Response> {
        do {
            let reply = try await networkReply(to: endpoint, request: request)
            await cache.save(reply.response, answering: request, ticket: ticket)
            return reply
        } catch {
            if error.code == .httpStatus, [404, 410].contains(error.status) { await cache.remove(ticket) }
            throw error
        }
    }

    /// A stored answer checked and decoded as the network's would be, or `nil` when it no
    /// longer decodes (the endpoint's type changed since, say): then the entry is removed,
    /// unless a newer one took its place meanwhile.
    private nonisolated func cachedReply<Response>(
        _ stored: CachedResponse, to endpoint: Endpoint<Response>, request: HTTPRequest, cache: ResponseCache,
        ticket: ResponseCache.Ticket, isStale: Bool = false
    ) async -> Reply<Response>? {
        let response = stored.response
        do {
            try validation.validate(
                response, method: request.method, checksContentType: endpoint.decoding.checksContentType)
            let value = try endpoint.decoding.decode(response, decodingContext)
            return Reply(
                value: value, response: response, decoder: decodingContext.decoder,
                cached: CacheInfo(storedAt: stored.storedAt, isStale: isStale))
        } catch {
            if await cache.response(for: ticket, answering: request)?.storedAt == stored.storedAt {
                await cache.remove(ticket)
            }
            return nil
        }
    }
}
