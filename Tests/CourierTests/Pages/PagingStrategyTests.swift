import Courier
import CourierTesting
import Foundation
import Testing

/// Each paging against the same 10-page list over real HTTP: exactly one request per page, the
/// right parameters, every item in order, and the end found without an extra request.
@Suite struct PagingStrategyTests {
    typealias OrderList = ListBackend.OrderList

    enum Strategy: String, CaseIterable, Sendable {
        case pageShort, pageHasMore, pageTotal, offsetShort, offsetTotal, cursor, nextURL, linkHeader, custom

        var paging: Paging<OrderList, Order> {
            switch self {
            case .pageShort: .pageNumber(size: ListBackend.size)
            case .pageHasMore: .pageNumber(size: ListBackend.size, end: .hasMore(at: "data.hasMore"))
            case .pageTotal: .pageNumber(size: ListBackend.size, end: .total(at: "data.total"))
            case .offsetShort: .offset(limit: ListBackend.size)
            case .offsetTotal: .offset(limit: ListBackend.size, end: .total(at: "data.total"))
            case .cursor: .cursor(at: "data.nextCursor")
            case .nextURL: .nextURL(at: "data.links.next")
            case .linkHeader: .linkHeader
            case .custom:
                .custom { _, items, _ in
                    items.count == ListBackend.size ? items.last.map { PagePosition(cursor: String($0.id)) } : nil
                } request: { endpoint, position in
                    var endpoint = endpoint
                    endpoint.query["after"] = position.cursor
                    return endpoint
                }
            }
        }

        /// The query each page number is asked with.
        func query(ofPage number: Int) -> String {
            let size = ListBackend.size
            switch self {
            case .pageShort, .pageHasMore, .pageTotal: return "page=\(number)&size=\(size)"
            case .offsetShort, .offsetTotal: return "offset=\((number - 1) * size)&limit=\(size)"
            case .cursor: return number == 1 ? "" : "cursor=c\(number)"
            case .nextURL, .linkHeader: return number == 1 ? "" : "page=\(number)"
            case .custom: return number == 1 ? "" : "after=\((number - 1) * size)"
            }
        }
    }

    @Test("each paging reads the 10 pages with 10 requests, every item once and in order", arguments: Strategy.allCases)
    func walksTheList(_ strategy: Strategy) async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        var pages: [Page<OrderList, Order>] = []
        for try await page in backend.client.pages(ListBackend.orders, items: \.list, paging: strategy.paging) {
            pages.append(page)
        }
        #expect(pages.flatMap(\.items).map(\.id) == Array(1...ListBackend.count))
        #expect(pages.map(\.index) == Array(0..<ListBackend.pages))
        #expect(pages.last?.isLast == true && pages.dropLast().allSatisfy { !$0.isLast })
        #expect(backend.requests.map(\.rawQuery) == (1...ListBackend.pages).map(strategy.query(ofPage:)))
    }

    @Test("the items of each paging, one by one, with the same 10 requests", arguments: Strategy.allCases)
    func itemsOneByOne(_ strategy: Strategy) async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        var ids: [Int] = []
        for try await order in backend.client.pages(ListBackend.orders, items: \.list, paging: strategy.paging).items {
            ids.append(order.id)
        }
        #expect(ids == Array(1...ListBackend.count))
        #expect(backend.pagesAsked == Array(1...ListBackend.pages))
    }

    @Test("a list whose payload is the array itself needs no items function")
    func payloadIsTheArray() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/tags") { request in
            let page = Int(request.query["page"] ?? "") ?? 0
            return .envelope(data: page <= 2 ? ["t\(page)a", "t\(page)b"] : ["t\(page)a"])
        }
        var tags: [String] = []
        for try await tag in backend.client.pages(Endpoint<[String]>.get("tags"), paging: .pageNumber(size: 2)).items {
            tags.append(tag)
        }
        #expect(tags == ["t1a", "t1b", "t2a", "t2b", "t3a"])
    }

    @Test("a page of another envelope field: the reply gives the total and the message")
    func otherFields() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: .pageNumber(size: 10))
            .makeAsyncIterator()
        let page = try #require(try await iterator.next())
        #expect(try page.reply.field("data.total", as: Int.self) == ListBackend.count)
        #expect(page.reply.message == "ok")
        #expect(page.position == PagePosition(page: 1) && page.next == PagePosition(page: 2))
    }

    @Test("pages counted from 0, and parameters of other names")
    func zeroBasedAndNamed() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/names") { request in
            let page = Int(request.query["p"] ?? "") ?? -1
            return .envelope(data: page < 2 ? ["n\(page)", "m\(page)"] : [])
        }
        let paging = Paging<[String], String>.pageNumber(size: 2, first: 0, pageParameter: "p", sizeParameter: "n")
        var names: [String] = []
        for try await name in backend.client.pages(Endpoint<[String]>.get("names"), paging: paging).items {
            names.append(name)
        }
        #expect(names == ["n0", "m0", "n1", "m1"])
        #expect(backend.server.requests.map(\.rawQuery) == ["p=0&n=2", "p=1&n=2", "p=2&n=2"])
    }
}
