import Courier
import CourierTesting
import Foundation

/// A backend with a list of 95 orders in pages of 10 at `/v1/orders`, readable by every paging:
/// `page`, `offset`, `cursor` (`c2`, `c3`, …) or `after` (the last id) in the query select the
/// page; each page's body has `list`, `hasMore`, `total`, `nextCursor` and `links.next` (a
/// relative URL), and its `Link` header the next page's absolute URL. A test can change the
/// answer for a page, and counts the requests.
final class ListBackend: @unchecked Sendable {
    static let count = 95
    static let size = 10
    static let pages = 10

    let server: LoopbackServer
    let client: NetworkClient
    private let lock = NSLock()
    private var answers: [Int: [LoopbackServer.Response]] = [:]
    private var cursors: [Int: String] = [:]
    private var links: [Int: String] = [:]
    private var pause: Duration?

    /// The page payload.
    struct OrderList: Codable, Sendable {
        let list: [Order]
    }

    init(configure: (inout NetworkClient.Configuration) -> Void = { _ in }) throws {
        let backend = try Backend(configure: configure)
        server = backend.server
        client = backend.client
        server.route("/v1/orders") { [self] request in try await respond(to: request) }
    }

    private func respond(to request: LoopbackServer.Request) async throws -> LoopbackServer.Response {
        let number = Self.pageNumber(request.query)
        let override: LoopbackServer.Response? = lock.withLock {
            guard answers[number]?.isEmpty == false else { return nil }
            return answers[number]?.removeFirst()
        }
        let next: String? = lock.withLock { cursors[number] }
        let link: String? = lock.withLock { links[number] }
        if let wait = lock.withLock({ pause }) { try await Task.sleep(for: wait) }
        return override ?? page(number, cursor: next, link: link)
    }

    /// The page of this query: 1 without any.
    static func pageNumber(_ query: Parameters) -> Int {
        if let page = query["page"].flatMap(Int.init) { return page }
        if let offset = query["offset"].flatMap(Int.init) { return offset / size + 1 }
        if let cursor = query["cursor"], let page = Int(cursor.dropFirst()) { return page }
        if let after = query["after"].flatMap(Int.init) { return after / size + 1 }
        return 1
    }

    /// The ids on page `number`.
    static func ids(onPage number: Int) -> [Int] {
        Array(stride(from: (number - 1) * size + 1, through: min(number * size, count), by: 1))
    }

    private func page(_ number: Int, cursor: String?, link: String?) -> LoopbackServer.Response {
        let ids = (1...Self.pages).contains(number) ? Self.ids(onPage: number) : []
        let hasMore = (1..<Self.pages).contains(number)
        var data: [String: Any] = [
            "list": ids.map { ["id": $0, "title": "Order \($0)"] }, "hasMore": hasMore, "total": Self.count,
        ]
        let nextCursor = cursor ?? (hasMore ? "c\(number + 1)" : nil)
        if let nextCursor { data["nextCursor"] = nextCursor }
        let nextLink = link ?? (hasMore ? "/v1/orders?page=\(number + 1)" : nil)
        if let nextLink { data["links"] = ["next": nextLink] }
        let body = try! JSONSerialization.data(
            withJSONObject: ["code": 0, "msg": "ok", "data": data], options: .sortedKeys)
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if hasMore {
            headers.append(
                name: "Link",
                value: "<\(server.baseURL)v1/orders?page=1>; rel=\"first\", "
                    + "<\(server.baseURL)v1/orders?page=\(number + 1)>; rel=\"next\"")
        }
        return LoopbackServer.Response(status: 200, headers: headers, body: body)
    }

    /// Answers page `number` with `answers`, one request each, before answering it as usual.
    func answer(page number: Int, with answers: LoopbackServer.Response...) {
        lock.withLock { self.answers[number, default: []] += answers }
    }

    /// Makes page `number` give `cursor` as the next one.
    func give(cursor: String, onPage number: Int) { lock.withLock { cursors[number] = cursor } }

    /// Makes page `number` link to `link` as the next one.
    func give(link: String, onPage number: Int) { lock.withLock { links[number] = link } }

    /// Makes every answer wait.
    func delay(by pause: Duration?) { lock.withLock { self.pause = pause } }

    /// The requests for the list, in order.
    var requests: [LoopbackServer.Request] { server.requests.filter { $0.path == "/v1/orders" } }

    /// The page each request asked for, in order.
    var pagesAsked: [Int] { requests.map { Self.pageNumber($0.query) } }

    /// The endpoint of the list.
    static let orders = Endpoint<OrderList>.get("orders")
}
