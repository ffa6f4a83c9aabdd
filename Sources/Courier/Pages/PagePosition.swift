import Foundation

/// Where a page of a list is: its page number, offset, cursor or URL, whichever the list's
/// ``Paging`` uses. `Codable`, so a walk through a list can be saved and continued later, after
/// a failure or a relaunch, without asking for the pages before it again.
///
/// Every ``Page`` has its own ``Page/position`` and the ``Page/next`` one; an error thrown for
/// a page that could not be read has it in ``NetworkError/pagePosition``.
///
/// ```swift
/// let orders = client.pages(Endpoint<[Order]>.get("orders"), paging: .pageNumber(size: 20))
/// for try await page in orders {
///     show(page.items)
///     UserDefaults.standard.set(try JSONEncoder().encode(page.next), forKey: "orders.next")
/// }
/// // … later, maybe after a relaunch:
/// if let data = UserDefaults.standard.data(forKey: "orders.next") {
///     let saved = try JSONDecoder().decode(PagePosition.self, from: data)
///     for try await page in orders.starting(from: saved) { show(page.items) }
/// }
/// ```
///
/// A position says nothing of who read the list: start from it with the same endpoint and
/// paging, for the same user. A next URL can hold what the server put in its query (a
/// signature, a token): keep such positions where you keep secrets.
public struct PagePosition: Codable, Sendable, Hashable {
    /// The page number, for ``Paging/pageNumber(size:end:first:pageParameter:sizeParameter:)``.
    public var page: Int?
    /// The offset of the page's first item, for ``Paging/offset(limit:end:offsetParameter:limitParameter:)``.
    public var offset: Int?
    /// The cursor the server gave for this page, for ``Paging/cursor(at:parameter:hasMore:)``;
    /// `nil` for the first page.
    public var cursor: String?
    /// The page's URL, for ``Paging/nextURL(at:)`` and ``Paging/linkHeader``; `nil` for the
    /// first page, which is the endpoint as it is.
    public var url: URL?

    /// Creates a position; for a ``Paging/custom(first:next:request:)`` paging, any of the
    /// fields, as its `request` reads them.
    /// - Parameters:
    ///   - page: A page number.
    ///   - offset: An offset.
    ///   - cursor: A cursor.
    ///   - url: A URL.
    public init(page: Int? = nil, offset: Int? = nil, cursor: String? = nil, url: URL? = nil) {
        self.page = page
        self.offset = offset
        self.cursor = cursor
        self.url = url
    }
}
