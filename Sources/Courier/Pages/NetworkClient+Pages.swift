extension NetworkClient {
    /// The pages of a list, read as they are asked for: every page is one ordinary request,
    /// through the token, signing, common parameters, a silent login (after which the same
    /// page is asked for again), the cache and shared transfers.
    ///
    /// ```swift
    /// struct Feed: Decodable, Sendable { let list: [Post]; let nextCursor: String? }
    ///
    /// for try await page in client.pages(Endpoint<Feed>.get("feed"), items: \.list, paging: .cursor(at: "data.nextCursor")) {
    ///     show(page.items)
    /// }
    /// for try await post in client.pages(Endpoint<Feed>.get("feed"), items: \.list, paging: .cursor(at: "data.nextCursor")).items {
    ///     show(post)
    /// }
    /// ```
    ///
    /// Nothing is sent until the first page is asked for, and one request per page after that.
    /// The list ends after its last page, at ``PagingOptions/maximumPages`` or
    /// ``PagingOptions/maximumItems``, or with an error: a failed page throws its
    /// ``NetworkError`` with ``NetworkError/pagePosition`` set, so the walk can start again
    /// there (``PageSequence/starting(from:)``) without asking for the pages before it. A page
    /// that leads back to one already read, or a link to another origin than the list's (unless
    /// ``PagingOptions/allowedOrigins`` lists it), throws ``NetworkError/Code/paging``.
    ///
    /// A walk belongs to the session as its first page found it: after a logout or a login as
    /// someone else, its next page throws ``NetworkError/Code/cancelled`` (or
    /// ``NetworkError/Code/sessionExpired``) instead of reading the rest for another user.
    /// - Parameters:
    ///   - endpoint: The list's endpoint, as for its first page.
    ///   - items: The items in a page's payload.
    ///   - paging: How the list is paged.
    ///   - options: Limits, reading ahead, and other origins its links may lead to.
    ///   - position: Where to start: `nil` for the first page.
    /// - Returns: The pages.
    public nonisolated func pages<Payload, Item>(
        _ endpoint: Endpoint<Payload>, items: @escaping @Sendable (Payload) -> [Item], paging: Paging<Payload, Item>,
        options: PagingOptions = PagingOptions(), from position: PagePosition? = nil
    ) -> PageSequence<Payload, Item> {
        PageSequence(
            client: self, endpoint: endpoint, itemsOf: items, paging: paging, options: options, start: position)
    }

    /// The pages of a list whose payload is the array of items itself: see
    /// ``pages(_:items:paging:options:from:)``.
    ///
    /// ```swift
    /// for try await order in client.pages(Endpoint<[Order]>.get("orders"), paging: .pageNumber(size: 20)).items {
    ///     show(order)
    /// }
    /// ```
    /// - Parameters:
    ///   - endpoint: The list's endpoint, as for its first page.
    ///   - paging: How the list is paged.
    ///   - options: Limits, reading ahead, and other origins its links may lead to.
    ///   - position: Where to start: `nil` for the first page.
    /// - Returns: The pages.
    public nonisolated func pages<Item>(
        _ endpoint: Endpoint<[Item]>, paging: Paging<[Item], Item>, options: PagingOptions = PagingOptions(),
        from position: PagePosition? = nil
    ) -> PageSequence<[Item], Item> {
        pages(endpoint, items: { $0 }, paging: paging, options: options, from: position)
    }
}
