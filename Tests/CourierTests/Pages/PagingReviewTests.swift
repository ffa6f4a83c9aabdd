import Courier
import CourierTesting
import Foundation
import Testing

/// What a hostile review of paging found: lists that go nowhere, links that loop back to the
/// first page or carry credentials, requests that leave the list's origin through a custom
/// paging, parameters sent twice, numbers rounded, links re-encoded, bad options.
@Suite struct PagingReviewTests {
    typealias OrderList = ListBackend.OrderList
    static let collect = PagingSafetyTests.collect

    @Test("a page parameter the server ignores gives the same page again: a paging error, not an endless list")
    func ignoredParameter() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let paging = Paging<OrderList, Order>.pageNumber(size: 10, pageParameter: "p")
        let (ids, error) = await Self.collect(backend.client.pages(ListBackend.orders, items: \.list, paging: paging))
        #expect(ids == Array(1...10) && error?.code == .paging)
        #expect(backend.requests.count == 2)
    }

    @Test("empty pages that each lead to a new cursor end with a paging error past the limit; without one, they go on")
    func emptyPagesForever() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/feed") { request in
            let next = (Int(request.query["cursor"] ?? "") ?? 0) + 1
            return .json(#"{"code":0,"msg":"ok","data":{"list":[],"next":"\#(next)"}}"#)
        }
        let endpoint = Endpoint<OrderList>.get("feed")
        let twoAllowed = PagingOptions(maximumEmptyPagesInARow: 2)
        let (ids, error) = await Self.collect(
            backend.client.pages(endpoint, items: \.list, paging: .cursor(at: "data.next"), options: twoAllowed))
        #expect(ids.isEmpty && error?.code == .paging)
        #expect(backend.server.requests.count == 3)

        // By default the limit is 10.
        let (_, byDefault) = await Self.collect(
            backend.client.pages(endpoint, items: \.list, paging: .cursor(at: "data.next")))
        #expect(byDefault?.code == .paging)
        #expect(backend.server.requests.count == 3 + 11)

        // No limit: a filtered scan may give long runs of empty pages; maximumPages ends it here.
        let unlimited = PagingOptions(maximumPages: 15, maximumEmptyPagesInARow: nil)
        let (none, noError) = await Self.collect(
            backend.client.pages(endpoint, items: \.list, paging: .cursor(at: "data.next"), options: unlimited))
        #expect(none.isEmpty && noError == nil)
        #expect(backend.server.requests.count == 3 + 11 + 15)
    }

    @Test("a custom paging that sends its cursor in a header field is not taken for a loop")
    func cursorInAHeader() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/feed") { request in
            let page = Int(request.headers["X-Continuation"] ?? "") ?? 1
            let next = page < 3 ? "\(page + 1)" : "null"
            return .json(
                #"{"code":0,"msg":"ok","data":{"list":[{"id":\#(page),"title":"t"}],"next":\#(next)}}"#)
        }
        let paging = Paging<OrderList, Order>.custom { reply, _, _ in
            try reply.field("data.next", as: Int.self).map { PagePosition(cursor: String($0)) }
        } request: { endpoint, position in
            var endpoint = endpoint
            endpoint.headers["X-Continuation"] = position.cursor
            return endpoint
        }
        let (ids, error) = await Self.collect(
            backend.client.pages(Endpoint<OrderList>.get("feed"), items: \.list, paging: paging))
        #expect(ids == [1, 2, 3] && error == nil)
    }

    @Test("a last page whose link leads back to the first is a loop: the first page is not given twice")
    func linkBackToFirst() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: "/v1/orders", onPage: 2)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next")))
        #expect(ids == Array(1...20) && error?.code == .paging)
        #expect(backend.pagesAsked == [1, 2])
    }

    @Test("a link written with another case or the default port is the same page: a loop")
    func linkSpelling() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: "HTTP://127.0.0.1:\(backend.server.port)/v1/orders?page=2#again", onPage: 2)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next")))
        #expect(ids == Array(1...20) && error?.code == .paging)
    }

    @Test("a next link with a user name and password is refused")
    func linkWithCredentials() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: "http://ann:secret@127.0.0.1:\(backend.server.port)/v1/orders?page=2", onPage: 1)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next")))
        #expect(ids == Array(1...10) && error?.code == .paging)
        #expect(error.map { !String(describing: $0).contains("secret") } == true)
        #expect(backend.requests.count == 1)
    }

    @Test("a custom paging whose request goes to another origin is refused before it is sent")
    func customToAnotherOrigin() async throws {
        let elsewhere = try LoopbackServer()
        defer { elsewhere.stop() }
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let paging = Paging<OrderList, Order>.custom { _, _, _ in
            PagePosition(cursor: "\(elsewhere.baseURL)v1/orders")
        } request: { endpoint, position in
            var endpoint = endpoint
            if let cursor = position.cursor { endpoint.path = cursor }
            return endpoint
        }
        let (ids, error) = await Self.collect(backend.client.pages(ListBackend.orders, items: \.list, paging: paging))
        #expect(ids == Array(1...10) && error?.code == .paging && elsewhere.requests.isEmpty)
    }

    @Test("a page parameter written in the path is replaced, not sent twice; the path's other parameters stay")
    func parameterInThePath() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let endpoint = Endpoint<OrderList>.get("orders?page=1&sort=new")
        var pages = 0
        for try await _ in backend.client.pages(endpoint, items: \.list, paging: .pageNumber(size: 10)) { pages += 1 }
        #expect(pages == ListBackend.pages)
        #expect(backend.requests.prefix(2).map(\.rawQuery) == ["page=1&sort=new&size=10", "page=2&sort=new&size=10"])
    }

    @Test("a next link's query goes on the wire as the server wrote it")
    func linkQueryAsWritten() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: "/v1/orders?page=2&q=a+b&sig=x%2Fy,z", onPage: 1)
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next"))
            .makeAsyncIterator()
        _ = try await iterator.next()
        _ = try await iterator.next()
        #expect(backend.requests.last?.rawQuery == "page=2&q=a+b&sig=x%2Fy,z")
    }

    @Test("a numeric cursor past 2^64 is sent with every digit")
    func bigNumericCursor() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/feed") { request in
            let next = request.query["cursor"] == nil ? "123456789012345678901234567890" : "null"
            return .json(#"{"code":0,"msg":"ok","data":{"list":[{"id":1,"title":"a"}],"next":\#(next)}}"#)
        }
        let pages = backend.client.pages(
            Endpoint<OrderList>.get("feed"), items: \.list, paging: .cursor(at: "data.next"))
        let (ids, error) = await Self.collect(pages)
        #expect(ids == [1, 1] && error == nil)
        #expect(backend.server.requests.last?.rawQuery == "cursor=123456789012345678901234567890")
    }

    @Test("an offset list whose server gives fewer than the limit asks next from the next item: nothing skipped")
    func cappedLimit() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/items") { request in
            let offset = Int(request.query["offset"] ?? "") ?? 0
            let ids = Array(stride(from: offset + 1, through: min(offset + 5, 12), by: 1))
            let list = ids.map { #"{"id":\#($0),"title":"t"}"# }.joined(separator: ",")
            return .json(#"{"code":0,"msg":"ok","data":{"list":[\#(list)],"total":12}}"#)
        }
        let paging = Paging<OrderList, Order>.offset(limit: 10, end: .total(at: "data.total"))
        let (ids, error) = await Self.collect(
            backend.client.pages(Endpoint<OrderList>.get("items"), items: \.list, paging: paging))
        #expect(ids == Array(1...12) && error == nil)
        #expect(
            backend.server.requests.map(\.rawQuery) == ["offset=0&limit=10", "offset=5&limit=10", "offset=10&limit=10"])
    }

    @Test("bad options and a position of another paging are clear errors, with nothing sent")
    func badOptions() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let byPage = Paging<OrderList, Order>.pageNumber(size: 10)
        for options in [
            PagingOptions(maximumPages: 0), PagingOptions(maximumItems: -1),
            PagingOptions(allowedOrigins: [URL(string: "cdn.example.com")!]),
        ] {
            let (_, error) = await Self.collect(
                backend.client.pages(ListBackend.orders, items: \.list, paging: byPage, options: options))
            #expect(error?.code == .invalidRequest)
        }
        for paging in [Paging<OrderList, Order>.cursor(at: "data.nextCursor"), .nextURL(at: "data.links.next")] {
            let (_, error) = await Self.collect(
                backend.client.pages(ListBackend.orders, items: \.list, paging: paging, from: PagePosition(page: 3)))
            #expect(error?.code == .paging)
        }
        #expect(backend.requests.isEmpty)
    }

    @Test("a relative next link is resolved against the page's URL after a redirect, on either transport")
    func relativeLinkAfterRedirect() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/list") { _ in LoopbackServer.Response(status: 302, headers: ["Location": "/v2/list"])
        }
        backend.server.route("/v2/list") { request in
            let page = Int(request.query["page"] ?? "") ?? 1
            let next = page < 2 ? #""?page=2""# : "null"
            return .json(#"{"code":0,"msg":"ok","data":{"list":[{"id":\#(page),"title":"t"}],"next":\#(next)}}"#)
        }
        let (ids, error) = await Self.collect(
            backend.client.pages(Endpoint<OrderList>.get("list"), items: \.list, paging: .nextURL(at: "data.next")))
        #expect(ids == [1, 2] && error == nil)
        #expect(backend.server.requests.map(\.target) == ["/v1/list", "/v2/list", "/v2/list?page=2"])
    }
}
