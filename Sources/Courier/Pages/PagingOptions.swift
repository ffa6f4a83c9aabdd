import Foundation

/// How far a walk through a list goes, whether it reads ahead, and which other origins its
/// links may lead to.
public struct PagingOptions: Sendable, Hashable {
    /// The most pages the sequence reads, or `nil` for no limit. A walk ends here as it ends at
    /// the list's last page, and its last page's ``Page/next`` still says where the rest is.
    public var maximumPages: Int?
    /// The most items the sequence gives, or `nil` for no limit: no page is asked for once this
    /// many were read, and ``PageSequence/items`` stops at exactly this many (a page sequence
    /// gives the page that reaches it whole).
    public var maximumItems: Int?
    /// Whether the next page is asked for as soon as a page is given, so it is ready when the
    /// reader wants it. At most one page is read that the reader never asks for.
    public var prefetchesNextPage: Bool
    /// Origins a next page's URL may be on besides the list's own (the first page's scheme,
    /// host and port), each given by a URL on it: `https://cdn.example.com`. A URL on any other
    /// origin ends the walk with ``NetworkError/Code/paging`` rather than send the token and
    /// signature there.
    public var allowedOrigins: [URL]
    /// The most empty pages in a row, each leading to another, before the walk ends with
    /// ``NetworkError/Code/paging`` as a list that goes nowhere; `nil` for no limit (a filtered
    /// scan that gives long runs of empty pages). Lists by page number or offset end at their
    /// first empty page anyway.
    public var maximumEmptyPagesInARow: Int?

    /// Creates options.
    /// - Parameters:
    ///   - maximumPages: The most pages read, or `nil` for no limit.
    ///   - maximumItems: The most items given, or `nil` for no limit.
    ///   - prefetchesNextPage: Whether the next page is read ahead.
    ///   - allowedOrigins: Other origins the list's links may lead to.
    ///   - maximumEmptyPagesInARow: The most empty pages in a row that lead on, or `nil` for no
    ///     limit.
    public init(
        maximumPages: Int? = nil, maximumItems: Int? = nil, prefetchesNextPage: Bool = false,
        allowedOrigins: [URL] = [],
        maximumEmptyPagesInARow: Int? = 10
    ) {
        self.maximumPages = maximumPages
        self.maximumItems = maximumItems
        self.prefetchesNextPage = prefetchesNextPage
        self.allowedOrigins = allowedOrigins
        self.maximumEmptyPagesInARow = maximumEmptyPagesInARow
    }

    /// Why these options cannot be used, if they cannot.
    var problem: String? {
        if let maximumPages, maximumPages < 1 {
            return "PagingOptions.maximumPages is \(maximumPages); it must be at least 1."
        }
        if let maximumItems, maximumItems < 1 {
            return "PagingOptions.maximumItems is \(maximumItems); it must be at least 1."
        }
        if let maximumEmptyPagesInARow, maximumEmptyPagesInARow < 0 {
            return "PagingOptions.maximumEmptyPagesInARow is \(maximumEmptyPagesInARow); it must be at least 0."
        }
        for url in allowedOrigins {
            let scheme = url.scheme?.lowercased()
            guard scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
                return "PagingOptions.allowedOrigins names \(url.origin), which is not an http or https origin."
            }
        }
        return nil
    }
}
