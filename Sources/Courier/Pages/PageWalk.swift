import Foundation

/// One walk through a list: the page it reads next, the positions it has read (to find a loop),
/// its counts against the limits, the session epoch it belongs to, and the page it reads ahead.
///
/// Every page is sent in the session epoch of the first: after a logout or a login as someone
/// else, the walk's next page throws (``NetworkError/Code/cancelled``, or
/// ``NetworkError/Code/sessionExpired`` when the backend ended the session) rather than read
/// another user's list from the middle. A silent login keeps the epoch, so the walk goes on.
actor PageWalk<Payload: Sendable, Item: Sendable> {
    private let client: NetworkClient
    private let endpoint: Endpoint<Payload>
    private let itemsOf: @Sendable (Payload) -> [Item]
    private let paging: Paging<Payload, Item>
    private let options: PagingOptions

    /// Where the next page is; `nil` once the list, or the walk, ended.
    private var upcoming: PagePosition?
    /// The hashes of the positions read, so a link back to one is found (a few bytes a page).
    private var seen: Set<Int> = []
    private var pagesRead = 0
    private var itemsRead = 0
    /// The session epoch of the first page; `nil` until it is sent.
    private var epoch: SessionEpoch?
    /// The origins the list's pages may be on; `nil` until the first page is read.
    private var origins: Set<String>?
    /// The page read ahead, and where it is.
    private var ahead: (position: PagePosition, task: Task<Result<Reply<Payload>, NetworkError>, Never>)?
    /// Whether a reader is waiting for a page.
    private var reading = false
    /// Where the page that failed is, until the walk is told to try it again.
    private var failed: PagePosition?

    init(
        client: NetworkClient, endpoint: Endpoint<Payload>, items: @escaping @Sendable (Payload) -> [Item],
        paging: Paging<Payload, Item>, options: PagingOptions, from start: PagePosition?
    ) {
        self.client = client
        self.endpoint = endpoint
        self.itemsOf = items
        self.paging = paging
        self.options = options
        self.upcoming = start ?? paging.first
    }

    deinit { ahead?.task.cancel() }

    /// The next page, or `nil` after the last (or at a limit). After an error the walk is over:
    /// it returns `nil`.
    /// - Throws: ``NetworkError``, with ``NetworkError/pagePosition`` saying where the page
    ///   that failed is.
    func next() async throws(NetworkError) -> Page<Payload, Item>? {
        guard !reading else {
            throw NetworkError(
                .invalidRequest, "A list's pages are read by one reader at a time, and another reads them.")
        }
        guard let position = upcoming, !limitReached else { return nil }
        reading = true
        defer { reading = false }
        do {
            return try await read(position)
        } catch {
            upcoming = nil
            ahead?.task.cancel()
            ahead = nil
            var failure = error
            if failure.pagePosition == nil { failure.pagePosition = position }
            failed = failure.pagePosition
            throw failure
        }
    }

    /// After an error, makes the walk try the page that failed again, in the same session
    /// epoch and with the positions it read still known (a pager's next load); nothing
    /// otherwise.
    func retry() {
        guard let failed, !reading else { return }
        upcoming = failed
        self.failed = nil
    }

    /// Whether the walk read as many pages or items as it may.
    private var limitReached: Bool {
        pagesRead >= options.maximumPages ?? .max || itemsRead >= options.maximumItems ?? .max
    }

    private func read(_ position: PagePosition) async throws(NetworkError) -> Page<Payload, Item> {
        if let problem = paging.problem { throw NetworkError(.invalidRequest, problem) }
        try check(position)
        let reply: Reply<Payload>
        if let ahead, ahead.position == position {
            self.ahead = nil
            let task = ahead.task
            reply = try await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }.get()
            // Read ahead before a logout, it is not given after it.
            try epoch?.check("the page read ahead was taken")
        } else {
            ahead?.task.cancel()
            ahead = nil
            let epoch = await currentEpoch()
            reply = try await Self.fetch(position, of: endpoint, by: paging, from: client, in: epoch)
        }
        let items = itemsOf(reply.value)
        let url: URL
        if let answered = reply.response.url {
            url = answered
        } else {
            url = try client.makeRequest(endpoint.pageRequest(position, paging)).url
        }
        let next: PagePosition?
        do {
            next = try paging.next(PageRead(reply: reply, items: items, position: position, url: url))
        } catch {
            throw error as? NetworkError
                ?? NetworkError(.paging, "The paging could not find the next page.", underlying: error)
        }
        seen.insert(position.hashValue)
        let page = Page(items: items, reply: reply, position: position, next: next, index: pagesRead)
        pagesRead += 1
        itemsRead += items.count
        upcoming = next
        if options.prefetchesNextPage, let next, !limitReached, (try? check(next)) != nil, let epoch {
            let (endpoint, paging, client) = (endpoint, paging, client)
            let task = Task { () -> Result<Reply<Payload>, NetworkError> in
                do throws(NetworkError) {
                    return .success(try await Self.fetch(next, of: endpoint, by: paging, from: client, in: epoch))
                } catch {
                    return .failure(error)
                }
            }
            ahead = (next, task)
        }
        return page
    }

    /// Refuses a position that leads back to a page the walk read (a loop), or to an origin the
    /// list may not go to.
    private func check(_ position: PagePosition) throws(NetworkError) {
        guard !seen.contains(position.hashValue) else {
            throw NetworkError(.paging, "The list leads back to a page it gave already: its paging loops.")
        }
        guard let url = position.url else { return }
        let origins = try allowedOrigins()
        guard origins.contains(url.origin) else {
            throw NetworkError(
                .paging,
                "The next page is on \(url.origin), another origin than the list's; PagingOptions.allowedOrigins lists those it may go to."
            )
        }
    }

    /// The list's own origin (its endpoint's) and those the options allow.
    private func allowedOrigins() throws(NetworkError) -> Set<String> {
        if let origins { return origins }
        let own = try client.makeRequest(endpoint).url.origin
        let origins = Set([own] + options.allowedOrigins.map(\.origin))
        self.origins = origins
        return origins
    }

    /// The epoch every page is sent in: the session's now, for the first.
    private func currentEpoch() async -> SessionEpoch {
        if let epoch { return epoch }
        let now = await client.session.beginEpoch()
        epoch = now
        return now
    }

    /// Sends the page at `position` in `epoch`.
    private static func fetch(
        _ position: PagePosition, of endpoint: Endpoint<Payload>, by paging: Paging<Payload, Item>,
        from client: NetworkClient, in epoch: SessionEpoch
    ) async throws(NetworkError) -> Reply<Payload> {
        try await client.reply(to: try endpoint.pageRequest(position, paging), in: epoch)
    }
}

extension Endpoint {
    /// The endpoint that reads the page at `position`.
    fileprivate func pageRequest<Item>(_ position: PagePosition, _ paging: Paging<Response, Item>) throws(NetworkError)
        -> Self
    {
        do {
            return try paging.request(self, position)
        } catch {
            throw error as? NetworkError
                ?? NetworkError(.invalidRequest, "The page's request could not be made.", underlying: error)
        }
    }
}
