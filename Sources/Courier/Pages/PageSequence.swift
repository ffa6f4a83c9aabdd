/// The pages of a list, read one request at a time as they are asked for: see
/// ``NetworkClient/pages(_:items:paging:options:from:)``.
///
/// Each iteration is a walk of its own from the sequence's start. A walk sends exactly one
/// request per page asked for (with ``PagingOptions/prefetchesNextPage``, at most one more),
/// so `break`, `prefix(_:)` or a cancelled task sends nothing more.
public struct PageSequence<Payload: Sendable, Item: Sendable>: AsyncSequence, Sendable {
    /// A page.
    public typealias Element = Page<Payload, Item>
    /// What reading throws.
    public typealias Failure = NetworkError

    let client: NetworkClient
    let endpoint: Endpoint<Payload>
    let itemsOf: @Sendable (Payload) -> [Item]
    let paging: Paging<Payload, Item>
    let options: PagingOptions
    /// Where the walk starts: `nil` for the first page.
    let start: PagePosition?

    /// The list's items, one by one, across its pages; at most
    /// ``PagingOptions/maximumItems``.
    public var items: ItemSequence<Payload, Item> { ItemSequence(pages: self) }

    /// The same list, from `position` instead.
    /// - Parameter position: Where to start: a page's ``Page/position`` or ``Page/next``, or
    ///   an error's ``NetworkError/pagePosition``.
    /// - Returns: The sequence.
    public func starting(from position: PagePosition?) -> Self {
        Self(client: client, endpoint: endpoint, itemsOf: itemsOf, paging: paging, options: options, start: position)
    }

    /// Starts a walk.
    public func makeAsyncIterator() -> Iterator {
        Iterator(
            walk: PageWalk(
                client: client, endpoint: endpoint, items: itemsOf, paging: paging, options: options, from: start))
    }

    /// Reads the pages of one walk.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let walk: PageWalk<Payload, Item>

        /// The next page, or `nil` after the list's last page, at a limit, or after an error.
        /// - Throws: ``NetworkError``, with ``NetworkError/pagePosition`` saying where the page
        ///   that failed is.
        public mutating func next() async throws(NetworkError) -> Page<Payload, Item>? {
            try await walk.next()
        }

        /// The next page, or `nil` after the list's last page, at a limit, or after an error.
        /// - Parameter actor: The caller's actor.
        /// - Throws: ``NetworkError``, as ``next()`` does.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError)
            -> Page<Payload, Item>?
        {
            try await walk.next()
        }
    }
}

/// The items of a list, one by one: see ``PageSequence/items``.
public struct ItemSequence<Payload: Sendable, Item: Sendable>: AsyncSequence, Sendable {
    /// An item.
    public typealias Element = Item
    /// What reading throws.
    public typealias Failure = NetworkError

    let pages: PageSequence<Payload, Item>

    /// Starts a walk.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: pages.makeAsyncIterator(), remaining: pages.options.maximumItems ?? .max)
    }

    /// Reads the items of one walk.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        var pages: PageSequence<Payload, Item>.Iterator
        /// How many more items may be given.
        var remaining: Int
        var buffered: [Item] = []
        var index = 0

        init(pages: PageSequence<Payload, Item>.Iterator, remaining: Int) {
            self.pages = pages
            self.remaining = remaining
        }

        /// The next item, or `nil` after the list's last.
        /// - Throws: ``NetworkError``, with ``NetworkError/pagePosition`` saying where the page
        ///   that failed is.
        public mutating func next() async throws(NetworkError) -> Item? {
            try await next(isolation: nil)
        }

        /// The next item, or `nil` after the list's last.
        /// - Parameter actor: The caller's actor.
        /// - Throws: ``NetworkError``, as ``next()`` does.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NetworkError) -> Item? {
            guard remaining > 0 else { return nil }
            while index == buffered.count {
                guard let page = try await pages.next(isolation: actor) else { return nil }
                buffered = page.items
                index = 0
            }
            defer { index += 1 }
            remaining -= 1
            return buffered[index]
        }
    }
}
