import Foundation

/// How a list is paged: where its first page is, how the next page is found from the one just
/// read, and how a position becomes a request.
///
/// ```swift
/// let orders = Endpoint<[Order]>.get("orders")
/// let numbered = client.pages(orders, paging: .pageNumber(size: 20))  // ?page=1&size=20, to a short page
/// let flagged = client.pages(orders, paging: .pageNumber(size: 20, end: .hasMore(at: "data.hasMore")))
/// let counted = client.pages(orders, paging: .offset(limit: 50, end: .total(at: "data.total")))  // ?offset=0&limit=50
/// let cursors = client.pages(orders, paging: .cursor(at: "data.nextCursor"))  // ?cursor=…
/// let linked = client.pages(orders, paging: .nextURL(at: "data.links.next"))
/// let headed = client.pages(orders, paging: .linkHeader)  // Link: <…>; rel="next"
/// ```
///
/// Paths such as `"data.nextCursor"` are dotted paths from the root of the JSON body.
/// Page numbers, offsets and cursors go in the query, replacing parameters of the same name;
/// a next URL replaces the endpoint's path and query. For anything else (the page in a `POST`
/// body, the last item's id as the cursor) use ``custom(first:next:request:)``.
public struct Paging<Payload: Sendable, Item: Sendable>: Sendable {
    /// Where the first page is.
    let first: PagePosition
    /// Where the page after the one read is, or `nil` when it was the last.
    let next: @Sendable (PageRead<Payload, Item>) throws -> PagePosition?
    /// The endpoint that reads the page at a position.
    let request: @Sendable (Endpoint<Payload>, PagePosition) throws -> Endpoint<Payload>
    /// Why the paging cannot be used (a size of zero, say), if it cannot.
    var problem: String?

    /// Pages numbered `first`, `first + 1`, … of `size` items each: `?page=1&size=20`.
    /// - Parameters:
    ///   - size: The items per page, at least 1.
    ///   - end: How the last page is known; every paging also ends on an empty page.
    ///   - first: The first page's number: 1, or 0 for backends that count from 0.
    ///   - pageParameter: The query parameter of the page number.
    ///   - sizeParameter: The query parameter of the size.
    /// - Returns: The paging.
    public static func pageNumber(
        size: Int, end: PageEnd = .shortPage, first: Int = 1, pageParameter: String = "page",
        sizeParameter: String = "size"
    ) -> Self {
        var paging = Self(first: PagePosition(page: first)) { read in
            let page = try read.position.required(\.page, "page number")
            // The items of the pages up to this one, as the page size counts them (`page` is
            // at least `first`, which is at least 0: see `request`).
            let pages = (page - first).addingReportingOverflow(1)
            let through = pages.partialValue.multipliedReportingOverflow(by: size)
            let isLast = try end.isLast(read, size: size) { total in
                pages.overflow || through.overflow || through.partialValue >= total
            }
            guard !isLast else { return nil }
            return PagePosition(page: try PageRead<Payload, Item>.advanced(page, by: 1))
        } request: { endpoint, position in
            let page = try position.required(\.page, "page number")
            guard page >= first else {
                throw NetworkError(.paging, "The page position's number \(page) comes before the first, \(first).")
            }
            return endpoint.setting([(pageParameter, String(page)), (sizeParameter, String(size))])
        }
        if size < 1 { paging.problem = "The page size is \(size); it must be at least 1." }
        if first < 0 { paging.problem = "The first page's number is \(first); it must be at least 0." }
        return paging
    }

    /// Pages from an offset, `limit` items each: `?offset=0&limit=50`, then `offset=50`, ….
    /// - Parameters:
    ///   - limit: The items per page, at least 1.
    ///   - end: How the last page is known; every paging also ends on an empty page.
    ///   - offsetParameter: The query parameter of the offset.
    ///   - limitParameter: The query parameter of the limit.
    /// - Returns: The paging.
    public static func offset(
        limit: Int, end: PageEnd = .shortPage, offsetParameter: String = "offset", limitParameter: String = "limit"
    ) -> Self {
        var paging = Self(first: PagePosition(offset: 0)) { read in
            let offset = try read.position.required(\.offset, "offset")
            // Counted by the items given, not the limit asked for: a server that gives fewer
            // (it caps the limit) has its next page at the next item.
            let through = offset.addingReportingOverflow(read.items.count)
            let isLast = try end.isLast(read, size: limit) { total in
                through.overflow || through.partialValue >= total
            }
            guard !isLast else { return nil }
            return PagePosition(offset: try PageRead<Payload, Item>.advanced(offset, by: read.items.count))
        } request: { endpoint, position in
            let offset = try position.required(\.offset, "offset")
            guard offset >= 0 else { throw NetworkError(.paging, "The page position's offset \(offset) is negative.") }
            return endpoint.setting([(offsetParameter, String(offset)), (limitParameter, String(limit))])
        }
        if limit < 1 { paging.problem = "The page limit is \(limit); it must be at least 1." }
        return paging
    }

    /// An opaque cursor the server gives in each page, sent back for the next one:
    /// `?cursor=…`. The first page goes without one; the list ends at a page whose cursor is
    /// missing, `null` or empty (or whose `hasMore` flag is `false`).
    /// - Parameters:
    ///   - path: Where the next page's cursor is in the body, for example `"data.nextCursor"`;
    ///     a string, or a number.
    ///   - parameter: The query parameter that carries it.
    ///   - hasMore: Where a flag that says whether more pages follow is, for backends that send
    ///     a cursor on the last page too.
    /// - Returns: The paging.
    public static func cursor(at path: String, parameter: String = "cursor", hasMore: String? = nil) -> Self {
        Self(first: PagePosition()) { read in
            if let hasMore, try !read.flag(at: hasMore) { return nil }
            guard let cursor = try read.text(at: path), !cursor.isEmpty else { return nil }
            return PagePosition(cursor: cursor)
        } request: { endpoint, position in
            try position.only(\.cursor, "cursor")
            guard let cursor = position.cursor else { return endpoint }
            return endpoint.setting([(parameter, cursor)])
        }
    }

    /// The next page's URL, given in each page's body, for example `data.links.next`; a
    /// relative URL is resolved against the page's. The list ends at a page whose link is
    /// missing, `null` or empty. The URL replaces the endpoint's path and query; the client's
    /// layers (token, signing, common parameters) still apply, so a link to another origin is
    /// refused unless ``PagingOptions/allowedOrigins`` lists it.
    /// - Parameter path: Where the URL is in the body.
    /// - Returns: The paging.
    public static func nextURL(at path: String) -> Self {
        Self(first: PagePosition()) { read in
            guard let link = try read.text(at: path), !link.isEmpty else { return nil }
            return PagePosition(url: try read.resolved(link))
        } request: { endpoint, position in
            try position.only(\.url, "URL")
            return endpoint.at(position.url)
        }
    }

    /// The next page's URL from the answer's `Link` header (RFC 8288), the link whose `rel`
    /// includes `next`: `Link: <https://api.example.com/items?page=2>; rel="next"`. The list
    /// ends at a page without one. As for ``nextURL(at:)``, a link to another origin is refused
    /// unless ``PagingOptions/allowedOrigins`` lists it.
    public static var linkHeader: Self {
        Self(first: PagePosition()) { read in
            let fields = read.reply.response.headers.fields.filter { $0.name.caseInsensitiveEquals("Link") }
            guard let link = LinkHeader.target(ofRelation: "next", in: fields.map(\.value)), !link.isEmpty else {
                return nil
            }
            return PagePosition(url: try read.resolved(link))
        } request: { endpoint, position in
            try position.only(\.url, "URL")
            return endpoint.at(position.url)
        }
    }

    /// A paging of your own: the page in a `POST` body, the last item's id as the cursor, ….
    ///
    /// ```swift
    /// let paging = Paging<[Order], Order>.custom { _, items, _ in
    ///     items.last.map { PagePosition(cursor: String($0.id)) }
    /// } request: { endpoint, position in
    ///     var endpoint = endpoint
    ///     endpoint.query["after"] = position.cursor
    ///     return endpoint
    /// }
    /// ```
    ///
    /// A `next` whose request is one the walk sent already ends it with
    /// ``NetworkError/Code/paging``, as does a request to another origin.
    /// - Parameters:
    ///   - first: Where the first page is.
    ///   - next: Where the page after the one read is, from its reply, its items and its
    ///     position; `nil` when it was the last. An error it throws ends the walk with
    ///     ``NetworkError/Code/paging`` (a ``NetworkError`` is thrown as it is).
    ///   - request: The endpoint that reads the page at a position.
    /// - Returns: The paging.
    public static func custom(
        first: PagePosition = PagePosition(),
        next:
            @escaping @Sendable (_ reply: Reply<Payload>, _ items: [Item], _ position: PagePosition) throws
            -> PagePosition?,
        request:
            @escaping @Sendable (_ endpoint: Endpoint<Payload>, _ position: PagePosition) throws
            -> Endpoint<Payload>
    ) -> Self {
        Self(first: first) { read in
            try next(read.reply, read.items, read.position)
        } request: { endpoint, position in
            try request(endpoint, position)
        }
    }

    private init(
        first: PagePosition, next: @escaping @Sendable (PageRead<Payload, Item>) throws -> PagePosition?,
        request: @escaping @Sendable (Endpoint<Payload>, PagePosition) throws -> Endpoint<Payload>
    ) {
        self.first = first
        self.next = next
        self.request = request
    }
}

/// How the last page of a list numbered by page or offset is known. Whichever is chosen, an
/// empty page is the last.
public enum PageEnd: Sendable, Hashable {
    /// A page with fewer items than the page size is the last.
    case shortPage
    /// A flag in the body says whether more pages follow, for example `"data.hasMore"`: `true`
    /// or `false`, or a number (0 is `false`). A page without it ends the walk with
    /// ``NetworkError/Code/paging``.
    case hasMore(at: String)
    /// A total count of items in the body, for example `"data.total"`: the page that reaches it
    /// is the last. A page without it ends the walk with ``NetworkError/Code/paging``.
    case total(at: String)

    /// Whether the page read is the last one; `reaches(total)` says whether the pages up to this
    /// one hold `total` items.
    func isLast<Payload, Item>(
        _ read: PageRead<Payload, Item>, size: Int, itemsThrough reaches: (Int) -> Bool
    ) throws -> Bool {
        if read.items.isEmpty { return true }
        switch self {
        case .shortPage: return read.items.count < size
        case .hasMore(let path): return try !read.flag(at: path)
        case .total(let path): return reaches(try read.count(at: path))
        }
    }
}

extension Endpoint {
    /// The endpoint with its path and query replaced by a page's URL, its query sent as the
    /// server wrote it; unchanged for `nil`.
    fileprivate func at(_ url: URL?) -> Self {
        guard let url else { return self }
        var endpoint = self
        let (path, query) = URLJoiner.split(url.absoluteString)
        endpoint.path = String(path)
        endpoint.query = Parameters.decoding(query ?? "", keepsText: .whenChanged)
        return endpoint
    }

    /// The endpoint with each of `parameters` set in its query (replacing those of the same
    /// name); a query written in the path is moved into ``query`` first, so a parameter there is
    /// replaced too instead of sent twice.
    fileprivate func setting(_ parameters: [(name: String, value: String)]) -> Self {
        var endpoint = self
        let (path, pathQuery) = URLJoiner.split(self.path)
        if let pathQuery {
            var query = Parameters.decoding(pathQuery)
            query.append(contentsOf: endpoint.query)
            endpoint.path = String(path)
            endpoint.query = query
        }
        for (name, value) in parameters { endpoint.query[name] = value }
        return endpoint
    }
}

extension PagePosition {
    /// A field a paging needs, or ``NetworkError/Code/paging`` when this position (from
    /// another paging, say) has none.
    fileprivate func required(_ field: KeyPath<PagePosition, Int?>, _ name: String) throws(NetworkError) -> Int {
        guard let value = self[keyPath: field] else {
            throw NetworkError(.paging, "The page position has no \(name); it was saved by another paging.")
        }
        return value
    }

    /// Throws ``NetworkError/Code/paging`` when this position has a field other than `field`
    /// (it was saved by another paging).
    fileprivate func only(_ field: WritableKeyPath<PagePosition, some Any>, _ name: String) throws(NetworkError) {
        var other = self
        other.cursor = field == \PagePosition.cursor ? nil : other.cursor
        other.url = field == \PagePosition.url ? nil : other.url
        guard other == PagePosition() else {
            throw NetworkError(.paging, "The page position is not a \(name); it was saved by another paging.")
        }
    }
}
