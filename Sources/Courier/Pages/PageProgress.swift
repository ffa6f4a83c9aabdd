import Foundation

/// What a walk has learnt of its list: the requests it sent (to find a loop), how many pages and
/// items it took, the session epoch of its first page, and what tells a list that goes nowhere
/// (empty pages in a row, a page answered exactly as the one before).
struct PageProgress: Sendable {
    /// The session epoch every page is sent in; `nil` until the first is sent.
    var epoch: SessionEpoch?
    var pagesRead = 0
    var itemsRead = 0
    /// A digest of each request sent (16 bytes a page).
    private var sentRequests: Set<PageRequestKey> = []
    /// How many pages in a row were empty.
    private var emptyRun = 0
    /// The body of the last page, and of the one before it.
    private var lastBody: Data?
    private var bodyBefore: Data?

    /// Whether the walk took as many pages or items as `options` allow.
    func reached(_ options: PagingOptions) -> Bool {
        pagesRead >= options.maximumPages ?? .max || itemsRead >= options.maximumItems ?? .max
    }

    /// Whether the walk sent this request already.
    func sent(_ request: PageRequestKey) -> Bool { sentRequests.contains(request) }

    /// Forgets that the walk sent this request, and the page it read (never taken).
    mutating func forget(_ request: PageRequestKey) {
        sentRequests.remove(request)
        lastBody = bodyBefore
        emptyRun = 0
    }

    /// Takes a page read with the request digested as `request`, which had `items` items and `body`, and leads on to
    /// another page or not.
    /// - Throws: ``NetworkError/Code/paging`` for a page that leads on though it is the same as
    ///   the one before (the paging's parameter does nothing), or the last of more empty pages
    ///   in a row than `options` allow.
    mutating func take(
        _ request: PageRequestKey, items: Int, body: Data, leadsOn: Bool, options: PagingOptions
    ) throws(NetworkError) {
        emptyRun = items == 0 ? emptyRun + 1 : 0
        if leadsOn, let most = options.maximumEmptyPagesInARow, emptyRun > most {
            throw NetworkError(
                .paging,
                "More than \(most) pages in a row were empty and each led to another: the list goes nowhere (PagingOptions.maximumEmptyPagesInARow)."
            )
        }
        if leadsOn, items > 0, body == lastBody {
            throw NetworkError(
                .paging,
                "The page was answered exactly as the one before it: the paging's parameter seems to do nothing.")
        }
        bodyBefore = lastBody
        lastBody = body
        sentRequests.insert(request)
        pagesRead += 1
        itemsRead += items
    }
}

/// A digest of what tells two page requests apart: the method, the URL (its origin written one
/// way), the query, the endpoint's own header fields (a paging may put its cursor in one) and
/// the body.
struct PageRequestKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(_ request: HTTPRequest) {
        let url = request.url
        let body = RequestDigest.parts(of: request)?.suffix(2) ?? ["a file or multipart body"]
        let headers = request.headers.fields.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
        let parts =
            [request.method.rawValue, url.origin, url.path(percentEncoded: true), request.query.encoded] + body
            + [String(headers.count)] + headers
        let digest = RequestDigest.digest("courier-page-1", parts)
        high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
