import Courier
import CourierTesting
import Foundation
import Testing

/// How far a walk goes: lazily, one request per page asked for; ahead by at most one page when
/// asked to; to its limits; and from a saved position after a failure.
@Suite struct PagingWalkTests {
    typealias OrderList = ListBackend.OrderList
    static let byPage = Paging<OrderList, Order>.pageNumber(size: ListBackend.size)

    @Test("nothing is sent until the first page is asked for, and a break after 3 pages sends no fourth")
    func lazyAndBreak() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pages = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage)
        try await Task.sleep(for: .milliseconds(50))
        #expect(backend.requests.isEmpty)
        var read = 0
        for try await _ in pages {
            read += 1
            if read == 3 { break }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(backend.pagesAsked == [1, 2, 3])
    }

    @Test("prefix(3) of the items asks for one page; prefix(25) for three")
    func prefixOfItems() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let items = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).items
        var ids: [Int] = []
        for try await order in items.prefix(3) { ids.append(order.id) }
        #expect(ids == [1, 2, 3] && backend.pagesAsked == [1])
        ids = []
        for try await order in items.prefix(25) { ids.append(order.id) }
        #expect(ids == Array(1...25) && backend.pagesAsked == [1, 1, 2, 3])
    }

    @Test("reading ahead asks for one page more than read, never two, and none past the last")
    func prefetch() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let options = PagingOptions(prefetchesNextPage: true)
        var read = 0
        for try await _ in backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: options)
        {
            read += 1
            if read == 3 {
                #expect(await backend.server.waitForEvents { _ in backend.requests.count == 4 })
                break
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(backend.pagesAsked == [1, 2, 3, 4])

        var all: [Int] = []
        for try await page in backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: options)
        {
            all += page.items.map(\.id)
        }
        #expect(all == Array(1...ListBackend.count))
        #expect(backend.pagesAsked == [1, 2, 3, 4] + Array(1...ListBackend.pages))
    }

    @Test("a page read ahead is the one given: it is not asked for again")
    func prefetchIsUsed() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.delay(by: .milliseconds(300))
        let options = PagingOptions(prefetchesNextPage: true)
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage, options: options)
            .makeAsyncIterator()
        _ = try await iterator.next()
        #expect(await backend.server.waitForEvents { $0.contains(.answered(target: "/v1/orders?page=2&size=10")) })
        let second = try #require(try await iterator.next())
        #expect(second.items.first?.id == 11)
        #expect(await backend.server.waitForEvents { _ in backend.requests.count == 3 })
        #expect(backend.pagesAsked == [1, 2, 3])
    }

    @Test("maximumPages and maximumItems end the walk; the last page still says where the rest is")
    func limits() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        var pages: [Page<OrderList, Order>] = []
        let limited = PagingOptions(maximumPages: 4)
        for try await page in backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: limited)
        {
            pages.append(page)
        }
        #expect(pages.count == 4 && pages.last?.next == PagePosition(page: 5))
        #expect(backend.pagesAsked == [1, 2, 3, 4])

        var ids: [Int] = []
        let items = backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: PagingOptions(maximumItems: 25)
        ).items
        for try await order in items { ids.append(order.id) }
        #expect(ids == Array(1...25))
        #expect(backend.pagesAsked == [1, 2, 3, 4, 1, 2, 3])
    }

    @Test("a failure on page 4 carries its position; the walk started there again asks for nothing before it")
    func resumeAfterFailure() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.answer(page: 4, with: .text("down", status: 503))
        let pages = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage)
        var ids: [Int] = []
        let error = await networkError {
            for try await page in pages { ids += page.items.map(\.id) }
        }
        #expect(error?.code == .httpStatus && error?.status == 503)
        #expect(ids == Array(1...30))
        let position = try #require(error?.pagePosition)
        // Saved across a relaunch.
        let saved = try JSONEncoder().encode(position)
        #expect(String(decoding: saved, as: UTF8.self) == #"{"page":4}"#)
        let restored = try JSONDecoder().decode(PagePosition.self, from: saved)

        for try await page in pages.starting(from: restored) { ids += page.items.map(\.id) }
        #expect(ids == Array(1...ListBackend.count))
        #expect(backend.pagesAsked == [1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10])
    }

    @Test("after an error the walk is over: the iterator gives nil and sends nothing")
    func overAfterError() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.answer(page: 2, with: .text("down", status: 500))
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).makeAsyncIterator()
        _ = try await iterator.next()
        let error = await networkError { _ = try await iterator.next() }
        #expect(error?.pagePosition == PagePosition(page: 2))
        #expect(try await iterator.next() == nil)
        #expect(backend.pagesAsked == [1, 2])
    }

    @Test("a cursor walk resumed from a page's next position reads the rest")
    func resumeCursor() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pages = backend.client.pages(ListBackend.orders, items: \.list, paging: .cursor(at: "data.nextCursor"))
        var iterator = pages.makeAsyncIterator()
        let second = try #require(try await iterator.next(), "page 1")
        let saved = try #require(second.next)
        #expect(saved == PagePosition(cursor: "c2"))
        var ids: [Int] = []
        for try await order in pages.starting(from: saved).items { ids.append(order.id) }
        #expect(ids == Array(11...ListBackend.count))
        #expect(backend.pagesAsked == Array(1...ListBackend.pages))
    }

    @Test("a cancelled reader stops the page in flight and sends no more")
    func cancelled() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pages = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage)
        let firstRead = AsyncStream<Void>.makeStream()
        let reader = Task {
            for try await page in pages {
                if page.index == 0 {
                    backend.delay(by: .seconds(30))
                    firstRead.continuation.yield()
                }
            }
        }
        for await _ in firstRead.stream { break }
        #expect(await backend.server.waitForEvents { _ in backend.requests.count == 2 })
        reader.cancel()
        let error = await networkError { try await reader.value }
        #expect(error?.code == .cancelled && error?.pagePosition == PagePosition(page: 2))
        #expect(backend.pagesAsked == [1, 2])
        #expect(backend.client.activeRequestCount == 0)
    }

    @Test("two readers of one iterator: the second is refused while the first waits")
    func oneReader() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.delay(by: .seconds(2))
        let iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).makeAsyncIterator()
        let first = Task {
            var copy = iterator
            return try await copy.next()?.index
        }
        #expect(await backend.server.waitForEvents { _ in backend.requests.count == 1 })
        var second = iterator
        let error = await networkError { _ = try await second.next() }
        #expect(error?.code == .invalidRequest)
        #expect(try await first.value == 0)
    }
}
