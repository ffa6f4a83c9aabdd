import Courier
import CourierTesting
import Foundation
import Testing

/// A list's pages through the cache and shared transfers, as any request's.
@Suite struct PagingCacheTests {
    typealias OrderList = ListBackend.OrderList
    static let byPage = Paging<OrderList, Order>.pageNumber(size: ListBackend.size)

    @Test("offline, a cached first page is given, marked stale, and the uncached second throws with its position")
    func offlineFirstPage() async throws {
        let reachability = ManualReachability(.online(.wifi), gatesLoopback: true)
        let backend = try ListBackend {
            $0.cache = ResponseCache()
            $0.reachability = reachability
        }
        defer { backend.server.stop() }
        let endpoint = ListBackend.orders.caching(.offlineFallback)
        for try await _ in backend.client.pages(
            endpoint, items: \.list, paging: Self.byPage, options: .init(maximumPages: 1))
        {}
        reachability.set(.offline)

        var pages: [Page<OrderList, Order>] = []
        let error = await networkError {
            for try await page in backend.client.pages(endpoint, items: \.list, paging: Self.byPage) {
                pages.append(page)
            }
        }
        #expect(pages.count == 1 && pages.first?.items.map(\.id) == Array(1...10))
        #expect(pages.first?.reply.cached?.isStale == true)
        #expect(error?.code == .offline && error?.pagePosition == PagePosition(page: 2))
        #expect(backend.pagesAsked == [1])
    }

    @Test("cache-first pages are read from the cache the second time: no request")
    func cacheFirst() async throws {
        let backend = try ListBackend { $0.cache = ResponseCache() }
        defer { backend.server.stop() }
        let endpoint = ListBackend.orders.caching(.cacheFirst(maxAge: .seconds(600)))
        let pages = backend.client.pages(endpoint, items: \.list, paging: Self.byPage)
        var first: [Int] = []
        for try await order in pages.items { first.append(order.id) }
        var second: [Int] = []
        for try await page in pages {
            #expect(page.reply.cached != nil)
            second += page.items.map(\.id)
        }
        #expect(first == Array(1...ListBackend.count) && second == first)
        #expect(backend.pagesAsked == Array(1...ListBackend.pages))
    }

    @Test("two screens walking the same list at once share each page's transfer")
    func sharedTransfers() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.delay(by: .seconds(1))
        let pages = backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: .init(maximumPages: 2))
        async let one = pages.reduce(into: [Int]()) { $0 += $1.items.map(\.id) }
        async let two = pages.reduce(into: [Int]()) { $0 += $1.items.map(\.id) }
        let (a, b) = try await (one, two)
        #expect(a == Array(1...20) && b == a)
        #expect(backend.pagesAsked == [1, 2], "\(backend.pagesAsked)")
    }
}
