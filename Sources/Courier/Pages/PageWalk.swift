import Foundation

/// One walk through a list: the page it reads next, what it learnt of the list (the requests it
/// sent, its counts, the session epoch), and the page it reads ahead.
///
/// Every page is sent in the session epoch of the first: after a logout or a login as someone
/// else, the walk's next page throws (``NetworkError/Code/cancelled``, or
/// ``NetworkError/Code/sessionExpired`` when the backend ended the session) rather than read
/// another user's list from the middle. A silent login keeps the epoch, so the walk goes on.
///
/// A class with a lock rather than an actor, so that a page costs its reader no executor hop:
/// `@unchecked Sendable` because `state` is only touched under `lock`, never across an `await`.
final class PageWalk<Payload: Sendable, Item: Sendable>: @unchecked Sendable {
    private let client: NetworkClient
    private let endpoint: Endpoint<Payload>
    private let itemsOf: @Sendable (Payload) -> [Item]
    private let paging: Paging<Payload, Item>
    private let options: PagingOptions

    private struct State {
        /// Where the next page is; `nil` once the list, or the walk, ended.
        var upcoming: PagePosition?
        /// Where the page that failed is, until the walk is told to try it again.
        var failed: PagePosition?
        var progress: PageProgress
        /// The origins the list's pages may be on; `nil` until the first page is asked for.
        var origins: Set<String>?
        /// The page read ahead, and where it is.
        var ahead: (position: PagePosition, task: Task<Result<Reply<Payload>, NetworkError>, Never>)?
        /// Whether a reader is waiting for a page.
        var reading = false
    }

    private let lock = NSLock()
    private var state: State

    init(
        client: NetworkClient, endpoint: Endpoint<Payload>, items: @escaping @Sendable (Payload) -> [Item],
        paging: Paging<Payload, Item>, options: PagingOptions, from start: PagePosition?,
        progress: PageProgress = PageProgress()
    ) {
        self.client = client
        self.endpoint = endpoint
        self.itemsOf = items
        self.paging = paging
        self.options = options
        self.state = State(upcoming: start ?? paging.first, progress: progress)
    }

    deinit { state.ahead?.task.cancel() }

    private func locked<Result>(_ body: (inout State) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// The next page, or `nil` after the last (or at a limit). After an error the walk is over
    /// (it returns `nil`) until ``retry()``.
    /// - Throws: ``NetworkError``, with ``NetworkError/pagePosition`` saying where the page
    ///   that failed is.
    func next() async throws(NetworkError) -> Page<Payload, Item>? {
        let start: Result<PagePosition?, NetworkError> = locked { state in
            guard !state.reading else {
                return .failure(
                    NetworkError(
                        .invalidRequest, "A list's pages are read by one reader at a time, and another reads them."))
            }
            guard let upcoming = state.upcoming else { return .success(nil) }
            state.reading = true
            return .success(upcoming)
        }
        guard let position = try start.get() else { return nil }
        defer { locked { $0.reading = false } }
        do throws(NetworkError) {
            if let problem = paging.problem ?? options.problem { throw NetworkError(.invalidRequest, problem) }
            guard !locked({ $0.progress.reached(options) }) else { return nil }
            return try await read(position)
        } catch {
            var failure = error
            if failure.pagePosition == nil { failure.pagePosition = position }
            let ahead = locked { state in
                state.upcoming = nil
                state.failed = failure.pagePosition
                defer { state.ahead = nil }
                return state.ahead?.task
            }
            ahead?.cancel()
            throw failure
        }
    }

    /// After an error, makes the walk try the page that failed again, in the same session
    /// epoch and with the requests it sent still known (a pager's next load); nothing
    /// otherwise.
    func retry() {
        locked { state in
            guard let failed = state.failed, !state.reading else { return }
            state.upcoming = failed
            state.failed = nil
        }
    }

    /// A walk that goes on from `position` in this walk's session epoch, knowing the requests
    /// this one sent except the one for `position` (a page read but never taken: a pager's load
    /// that a refresh dropped), with counts of what was taken.
    func continuing(from position: PagePosition, pagesRead: Int, itemsRead: Int) -> PageWalk {
        var progress = locked { $0.progress }
        if let (_, request) = try? self.request(at: position) { progress.forget(PageRequestKey(request)) }
        progress.pagesRead = pagesRead
        progress.itemsRead = itemsRead
        return PageWalk(
            client: client, endpoint: endpoint, items: itemsOf, paging: paging, options: options, from: position,
            progress: progress)
    }

    private func read(_ position: PagePosition) async throws(NetworkError) -> Page<Payload, Item> {
        let (pageEndpoint, request) = try self.request(at: position)
        let key = try check(request)
        let ahead = locked { state in
            defer { state.ahead = nil }
            return state.ahead
        }
        let readAhead = ahead?.position == position ? ahead?.task : nil
        if readAhead == nil { ahead?.task.cancel() }
        let reply: Reply<Payload>
        if let readAhead {
            reply = try await withTaskCancellationHandler {
                await readAhead.value
            } onCancel: {
                readAhead.cancel()
            }
            .get()
        } else {
            reply = try await client.reply(to: pageEndpoint, request: request, in: await currentEpoch())
        }
        let items = itemsOf(reply.value)
        let next: PagePosition?
        do {
            next = try paging.next(
                PageRead(reply: reply, items: items, position: position, url: reply.response.url ?? request.url))
        } catch {
            throw error as? NetworkError
                ?? NetworkError(.paging, "The paging could not find the next page.", underlying: error)
        }
        // A logout while the page was read: it is not given.
        try checkSession()
        let taken: Result<Int, NetworkError> = locked { state in
            do throws(NetworkError) {
                try state.progress.take(
                    key, items: items.count, body: reply.response.body, leadsOn: next != nil, options: options)
            } catch {
                return .failure(error)
            }
            state.upcoming = next
            return .success(state.progress.pagesRead - 1)
        }
        let page = Page(items: items, reply: reply, position: position, next: next, index: try taken.get())
        if options.prefetchesNextPage, let next { self.readAhead(next) }
        return page
    }

    /// Throws when the session left the epoch of the walk's first page (a logout, a login as
    /// someone else): ``NetworkError/Code/cancelled``, or ``NetworkError/Code/sessionExpired``
    /// when the backend ended it.
    func checkSession() throws(NetworkError) {
        try locked { $0.progress.epoch }?.check("a page was read")
    }

    /// Starts reading the page at `next`, unless the walk may not go there.
    private func readAhead(_ next: PagePosition) {
        guard let (pageEndpoint, request) = try? self.request(at: next), (try? check(request)) != nil,
            let epoch = locked({ $0.progress.reached(options) ? nil : $0.progress.epoch })
        else { return }
        let client = client
        let task = Task { () -> Result<Reply<Payload>, NetworkError> in
            do throws(NetworkError) {
                return .success(try await client.reply(to: pageEndpoint, request: request, in: epoch))
            } catch {
                return .failure(error)
            }
        }
        locked { $0.ahead = (next, task) }
    }

    /// The endpoint of the page at `position`, and the request it makes.
    private func request(at position: PagePosition) throws(NetworkError) -> (Endpoint<Payload>, HTTPRequest) {
        let pageEndpoint: Endpoint<Payload>
        do {
            pageEndpoint = try paging.request(endpoint, position)
        } catch {
            throw error as? NetworkError
                ?? NetworkError(.invalidRequest, "The page's request could not be made.", underlying: error)
        }
        return (pageEndpoint, try client.makeRequest(pageEndpoint))
    }

    /// Refuses a request with a user name or password in its URL, on an origin the list may not
    /// go to, or that the walk sent already (a loop); returns the request's digest.
    @discardableResult
    private func check(_ request: HTTPRequest) throws(NetworkError) -> PageRequestKey {
        let url = request.url
        guard url.user == nil, url.password == nil else {
            throw NetworkError(.paging, "The next page's URL carries a user name or password.")
        }
        guard try allowedOrigins().contains(url.origin) else {
            throw NetworkError(
                .paging,
                "The next page is on \(url.origin), another origin than the list's; PagingOptions.allowedOrigins lists those it may go to."
            )
        }
        let key = PageRequestKey(request)
        guard !locked({ $0.progress.sent(key) }) else {
            throw NetworkError(.paging, "The list leads back to a page it gave already: its paging loops.")
        }
        return key
    }

    /// The list's own origin (its endpoint's) and those the options allow.
    private func allowedOrigins() throws(NetworkError) -> Set<String> {
        if let origins = locked({ $0.origins }) { return origins }
        let own = try client.makeRequest(endpoint).url.origin
        let origins = Set([own] + options.allowedOrigins.map(\.origin))
        locked { $0.origins = origins }
        return origins
    }

    /// The epoch every page is sent in: the session's now, for the first.
    private func currentEpoch() async -> SessionEpoch {
        if let epoch = locked({ $0.progress.epoch }) { return epoch }
        let now = await client.session.beginEpoch()
        return locked { state in
            if state.progress.epoch == nil { state.progress.epoch = now }
            return state.progress.epoch ?? now
        }
    }
}
