import Courier
import CourierTesting
import Foundation
import Testing

/// What a list's paging must not do: loop, follow a link to another origin with the token, or
/// take a bad input for a page.
@Suite struct PagingSafetyTests {
    typealias OrderList = ListBackend.OrderList

    static func collect(_ pages: PageSequence<OrderList, Order>) async -> ([Int], NetworkError?) {
        var ids: [Int] = []
        let error = await networkError {
            for try await page in pages { ids += page.items.map(\.id) }
        }
        return (ids, error)
    }

    @Test("a cursor that leads back to an earlier page ends the walk with a paging error, after the pages read")
    func cursorCycle() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(cursor: "c2", onPage: 3)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .cursor(at: "data.nextCursor")))
        #expect(ids == Array(1...30))
        #expect(error?.code == .paging && error?.pagePosition == PagePosition(cursor: "c2"))
        #expect(backend.pagesAsked == [1, 2, 3])
    }

    @Test("a next link that leads back to the page itself ends the walk", arguments: ["/v1/orders?page=2", "?page=2"])
    func linkCycle(_ link: String) async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: link, onPage: 2)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next")))
        #expect(ids == Array(1...20))
        #expect(error?.code == .paging)
        #expect(backend.pagesAsked == [1, 2])
    }

    @Test("an empty or missing cursor is the list's end, not an error", arguments: ["", "null"])
    func emptyCursor(_ cursor: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/feed") { request in
            let next = request.query["cursor"] == nil ? #""b""# : (cursor.isEmpty ? #""""# : cursor)
            return .json(#"{"code":0,"msg":"ok","data":{"list":[{"id":1,"title":"a"}],"next":\#(next)}}"#)
        }
        var pages = 0
        for try await _ in backend.client.pages(
            Endpoint<OrderList>.get("feed"), items: \.list, paging: .cursor(at: "data.next"))
        {
            pages += 1
        }
        #expect(pages == 2 && backend.server.requests.count == 2)
    }

    @Test("a cursor flagged as the last by hasMore ends the walk though a cursor is there")
    func cursorWithHasMore() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(cursor: "c99", onPage: ListBackend.pages)
        let paging = Paging<OrderList, Order>.cursor(at: "data.nextCursor", hasMore: "data.hasMore")
        let (ids, error) = await Self.collect(backend.client.pages(ListBackend.orders, items: \.list, paging: paging))
        #expect(error == nil && ids == Array(1...ListBackend.count))
        #expect(backend.pagesAsked == Array(1...ListBackend.pages))
    }

    @Test("a next link to another origin is refused and nothing goes there; allowed, it is followed")
    func crossOrigin() async throws {
        let elsewhere = try LoopbackServer()
        defer { elsewhere.stop() }
        elsewhere.route("/v1/orders") { _ in .envelope(data: OrderList(list: [Order(id: 999, title: "far")])) }
        let session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "secret-token")))
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        backend.give(link: "\(elsewhere.baseURL)v1/orders?page=9", onPage: 2)

        let pages = backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next"))
        let (ids, error) = await Self.collect(pages)
        #expect(ids == Array(1...20))
        #expect(error?.code == .paging && error?.message.contains("http://127.0.0.1:\(elsewhere.port)") == true)
        #expect(error?.pagePosition?.url == URL(string: "\(elsewhere.baseURL)v1/orders?page=9"))
        #expect(elsewhere.requests.isEmpty)

        // Started from the refused position, it is still refused.
        let (resumed, again) = await Self.collect(pages.starting(from: error?.pagePosition))
        #expect(resumed.isEmpty && again?.code == .paging && elsewhere.requests.isEmpty)

        let allowed = PagingOptions(allowedOrigins: [URL(string: "http://127.0.0.1:\(elsewhere.port)")!])
        let (followed, none) = await Self.collect(
            backend.client.pages(
                ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next"), options: allowed))
        #expect(none == nil && followed == Array(1...20) + [999])
        #expect(elsewhere.requests.count == 1)
    }

    @Test("an https list's link to the same host over http is another origin")
    func downgrade() async throws {
        let transport = MockTransport { request in
            .json(
                #"{"code":0,"msg":"ok","data":{"list":[{"id":1,"title":"a"}],"next":"http://api.example.com/orders?page=2"}}"#
            )
        }
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let (ids, error) = await Self.collect(
            client.pages(Endpoint<OrderList>.get("orders"), items: \.list, paging: .nextURL(at: "data.next")))
        #expect(ids == [1] && error?.code == .paging)
        #expect(transport.requests.count == 1)
    }

    @Test(
        "a link that is not an http URL ends the walk with a paging error",
        arguments: ["javascript:alert(1)", "http://", "ftp://127.0.0.1/x"])
    func notHTTP(_ link: String) async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.give(link: link, onPage: 1)
        let (ids, error) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .nextURL(at: "data.links.next")))
        #expect(ids.isEmpty && error?.code == .paging && error?.pagePosition == PagePosition())
        #expect(backend.pagesAsked == [1])
    }

    @Test("a page without the hasMore flag or the total it is told to read ends with a paging error")
    func missingEndField() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        for end in [PageEnd.hasMore(at: "data.more"), .total(at: "data.count")] {
            let (ids, error) = await Self.collect(
                backend.client.pages(ListBackend.orders, items: \.list, paging: .pageNumber(size: 10, end: end)))
            #expect(ids.isEmpty && error?.code == .paging && error?.pagePosition == PagePosition(page: 1))
        }
    }

    @Test("bad inputs: a page size of 0, a first page below 0, a position of another paging")
    func badInputs() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let (_, zero) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .pageNumber(size: 0)))
        #expect(zero?.code == .invalidRequest)
        let (_, negative) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .offset(limit: -1)))
        #expect(negative?.code == .invalidRequest)
        let (_, below) = await Self.collect(
            backend.client.pages(ListBackend.orders, items: \.list, paging: .pageNumber(size: 10, first: -1)))
        #expect(below?.code == .invalidRequest)
        let (_, foreign) = await Self.collect(
            backend.client.pages(
                ListBackend.orders, items: \.list, paging: .pageNumber(size: 10), from: PagePosition(cursor: "c3")))
        #expect(foreign?.code == .paging)
        let (_, before) = await Self.collect(
            backend.client.pages(
                ListBackend.orders, items: \.list, paging: .pageNumber(size: 10), from: PagePosition(page: 0)))
        #expect(before?.code == .paging)
        #expect(backend.requests.isEmpty)
    }

    @Test("the page after the largest page number is a paging error, not a crash")
    func pastTheLargestNumber() async throws {
        let transport = MockTransport { _ in .json(#"{"code":0,"msg":"ok","data":{"list":[{"id":1,"title":"a"}]}}"#) }
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        for paging in [Paging<OrderList, Order>.pageNumber(size: 1), .offset(limit: 1)] {
            let (ids, error) = await Self.collect(
                client.pages(
                    Endpoint<OrderList>.get("orders"), items: \.list, paging: paging,
                    from: PagePosition(page: .max, offset: .max)))
            #expect(ids.isEmpty && error?.code == .paging)
        }
        #expect(transport.requests.count == 2)
    }

    @Test("a custom paging's error ends the walk with a paging error that keeps it")
    func customThrows() async throws {
        struct Broken: Error {}
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let paging = Paging<OrderList, Order>.custom { _, _, _ in
            throw Broken()
        } request: { endpoint, _ in
            endpoint
        }
        let (ids, error) = await Self.collect(backend.client.pages(ListBackend.orders, items: \.list, paging: paging))
        #expect(ids.isEmpty && error?.code == .paging && error?.underlying is Broken)
    }

    @Test("a custom paging whose next request is the one it sent already is a loop, found before it is sent")
    func customLoop() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let paging = Paging<OrderList, Order>.custom { _, _, _ in
            PagePosition(cursor: "x")
        } request: { endpoint, _ in
            endpoint
        }
        let (ids, error) = await Self.collect(backend.client.pages(ListBackend.orders, items: \.list, paging: paging))
        #expect(ids == Array(1...10) && error?.code == .paging)
        #expect(backend.requests.count == 1)
    }
}
