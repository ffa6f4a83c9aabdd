import Foundation

extension NetworkClient {
    /// Answers an endpoint whose policy uses `cache`: from the cache, the network, or both, as
    /// the policy says. A request that cannot be cached (see ``ResponseCache/key(for:)``) goes to
    /// the network only.
    nonisolated func reply<Response>(to endpoint: Endpoint<Response>, request: HTTPRequest, cache: ResponseCache)
        async throws(NetworkError) -> Reply<Response>
    {
        guard let key = await cache.key(for: request) else {
            return try await networkReply(to: endpoint, request: request)
        }
        switch endpoint.cachePolicy.kind {
        case .networkOnly:
            return try await networkReply(to: endpoint, request: request)
        case .cacheFirst(let maxAge):
            if let stored = await cache.response(for: key, answering: request), cache.isFresh(stored, maxAge: maxAge),
                let reply = await cachedReply(
                    stored, to: endpoint, request: request, key: key, cache: cache, isStale: false)
            {
                return reply
            }
            return try await storedReply(to: endpoint, request: request, key: key, cache: cache)
        case .staleWhileRevalidate(let maxAge):
            if let stored = await cache.response(for: key, answering: request) {
                let isStale = !cache.isFresh(stored, maxAge: maxAge)
                if let reply = await cachedReply(
                    stored, to: endpoint, request: request, key: key, cache: cache, isStale: isStale)
                {
                    if isStale {
                        // The refresh belongs to no caller: cancelling this one does not stop it
                        // (cancelAll() does), and a failure leaves the stale entry in place.
                        Task.detached { [self] in
                            _ = try? await storedReply(to: endpoint, request: request, key: key, cache: cache)
                        }
                    }
                    return reply
                }
            }
            return try await storedReply(to: endpoint, request: request, key: key, cache: cache)
        case .offlineFallback:
            do {
                return try await storedReply(to: endpoint, request: request, key: key, cache: cache)
            } catch  where [.offline, .transport, .timedOut].contains(error.code) {
                if let stored = await cache.response(for: key, answering: request),
                    let reply = await cachedReply(
                        stored, to: endpoint, request: request, key: key, cache: cache, isStale: true)
                {
                    return reply
                }
                throw error
            }
        }
    }

    /// The network's answer, stored under `key` once it has decoded.
    private nonisolated func storedReply<Response>(
        to endpoint: Endpoint<Response>, request: HTTPRequest, key: CacheKey, cache: ResponseCache
    ) async throws(NetworkError) -> Reply<Response> {
        let reply = try await networkReply(to: endpoint, request: request)
        await cache.save(reply.response, answering: request, under: key)
        return reply
    }

    /// A stored answer checked and decoded as the network's would be, or `nil` (and the entry
    /// removed) when it no longer decodes: the endpoint's type changed since, say.
    private nonisolated func cachedReply<Response>(
        _ stored: CachedResponse, to endpoint: Endpoint<Response>, request: HTTPRequest, key: CacheKey,
        cache: ResponseCache, isStale: Bool
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
            try? await cache.store.removeResponse(for: key)
            return nil
        }
    }
}
