import Foundation

/// One page of a list read by ``NetworkClient/pages(_:items:paging:options:from:)``: its items,
/// the reply they came in (for the envelope's other fields), and where it and the next page
/// are.
///
/// ```swift
/// let orders = Endpoint<[Order]>.get("orders")
/// for try await page in client.pages(orders, paging: .pageNumber(size: 20, end: .total(at: "data.total"))) {
///     show(page.items)
///     show(try page.reply.field("data.total", as: Int.self) ?? 0)  // the envelope's other fields
///     saved = page.next  // continue from here another time
/// }
/// ```
public struct Page<Payload: Sendable, Item: Sendable>: Sendable {
    /// The page's items, in the order the server gave them.
    public let items: [Item]
    /// The page's payload together with its answer: status, headers, whether it came from the
    /// cache, the envelope's message and ``Reply/field(_:as:)`` for its other fields.
    public let reply: Reply<Payload>
    /// Where this page is: start from it to read this page again, and the rest.
    public let position: PagePosition
    /// Where the next page is; `nil` when this page is the list's last. Start from it to read
    /// the rest of the list another time.
    public let next: PagePosition?
    /// The page's place among the pages this sequence read: 0 for the first.
    public let index: Int

    /// Whether this is the list's last page.
    public var isLast: Bool { next == nil }
}

/// A page as it was read, before its next position is known: what a paging finds the next page
/// from.
struct PageRead<Payload: Sendable, Item: Sendable>: Sendable {
    let reply: Reply<Payload>
    let items: [Item]
    let position: PagePosition
    /// The page's URL, which a relative link is resolved against.
    let url: URL

    /// The text (a string, or a number written out) at `path` in the body; `nil` when it is
    /// missing or `null`.
    func text(at path: String) throws(NetworkError) -> String? {
        switch try reply.field(path, as: PageValue.self) {
        case nil: return nil
        case .text(let text): return text
        case .number(let number): return number
        case .flag: throw NetworkError(.paging, "The field \"\(path.prefix(100))\" is true or false, not text.")
        }
    }

    /// The flag at `path`: `true` or `false`, or a number that is not 0.
    /// - Throws: ``NetworkError/Code/paging`` when it is missing or neither.
    func flag(at path: String) throws(NetworkError) -> Bool {
        switch try reply.field(path, as: PageValue.self) {
        case .flag(let flag): return flag
        case .number(let number): return Double(number) != 0
        case .text(let text) where text == "true" || text == "false": return text == "true"
        case nil: throw NetworkError(.paging, "The page has no \"\(path.prefix(100))\" to say whether more follow.")
        case .text: throw NetworkError(.paging, "The field \"\(path.prefix(100))\" is not true or false.")
        }
    }

    /// The whole number at `path` (a number, or a string of digits).
    /// - Throws: ``NetworkError/Code/paging`` when it is missing or not a whole number.
    func count(at path: String) throws(NetworkError) -> Int {
        switch try reply.field(path, as: PageValue.self) {
        case .number(let text), .text(let text):
            if let count = Int(text) { return count }
            throw NetworkError(.paging, "The field \"\(path.prefix(100))\" is not a whole number.")
        case .flag: throw NetworkError(.paging, "The field \"\(path.prefix(100))\" is not a whole number.")
        case nil: throw NetworkError(.paging, "The page has no \"\(path.prefix(100))\" to count the list by.")
        }
    }

    /// A link resolved against the page's URL.
    /// - Throws: ``NetworkError/Code/paging`` when it is not an `http` or `https` URL.
    func resolved(_ link: String) throws(NetworkError) -> URL {
        guard let url = URL(string: link, relativeTo: url)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else {
            throw NetworkError(.paging, "The next page's link is not an http or https URL.")
        }
        return url
    }

    /// `value + step`, or ``NetworkError/Code/paging`` past the largest `Int`.
    static func advanced(_ value: Int, by step: Int) throws(NetworkError) -> Int {
        let (sum, overflow) = value.addingReportingOverflow(step)
        guard !overflow else {
            throw NetworkError(.paging, "The next page's number or offset is past the largest Int.")
        }
        return sum
    }
}

/// A value a paging reads from a body: text, a number (as it would be written), or a flag.
enum PageValue: Decodable {
    case text(String)
    case number(String)
    case flag(Bool)

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let text = try? value.decode(String.self) {
            self = .text(text)
        } else if let flag = try? value.decode(Bool.self) {
            self = .flag(flag)
        } else if let whole = try? value.decode(Int64.self) {
            self = .number(String(whole))
        } else if let whole = try? value.decode(UInt64.self) {
            self = .number(String(whole))
        } else {
            // Any other number, with its digits as the server sent them (a Double would round
            // a cursor past 2^53).
            self = .number(try value.decode(Decimal.self).description)
        }
    }
}
