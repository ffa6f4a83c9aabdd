import Courier
import CourierTesting
import Foundation
import Observation
import Testing

/// The observable pager over real HTTP: loads that join, a refresh that replaces the list in one
/// step, a failure that is tried again, and a session change.
@MainActor @Suite struct PagerTests {
    typealias OrderList = ListBackend.OrderList
    static let byPage = Paging<OrderList, Order>.pageNumber(size: ListBackend.size)

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    static func pager(_ backend: ListBackend, options: PagingOptions = .init()) -> Pager<OrderList, Order> {
        Pager(backend.client.pages(ListBackend.orders, items: \.list, paging: byPage, options: options))
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("loadNext appends a page at a time, and sends nothing after the last")
    func loadsToTheEnd() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        #expect(pager.items.isEmpty && backend.requests.isEmpty)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...10) && pager.activity == .idle && !pager.isFinished)
        for _ in 2...12 { await pager.loadNext() }
        #expect(pager.items.map(\.id) == Array(1...ListBackend.count))
        #expect(pager.isFinished && pager.lastPage?.isLast == true)
        #expect(backend.pagesAsked == Array(1...ListBackend.pages))
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a loadNext during a load joins it: three callers, one request, one page")
    func loadsJoin() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.delay(by: .seconds(1))
        let pager = Self.pager(backend)
        async let a: Void = pager.loadNext()
        async let b: Void = pager.loadNext()
        async let c: Void = pager.loadNext()
        _ = await (a, b, c)
        #expect(pager.items.map(\.id) == Array(1...10))
        #expect(backend.pagesAsked == [1] && pager.error == nil)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("refresh keeps the old items until the first page arrives, then replaces them in one step")
    func refreshReplaces() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        await pager.loadNext()
        #expect(pager.items.count == 20)
        backend.delay(by: .seconds(1))
        var seen: [Int] = []
        let refreshing = Task { await pager.refresh() }
        while backend.requests.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(pager.activity == .refreshing)
        seen.append(pager.items.count)
        await refreshing.value
        seen.append(pager.items.count)
        #expect(seen == [20, 10])
        #expect(pager.items.map(\.id) == Array(1...10) && pager.activity == .idle)
        backend.delay(by: nil)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...20))
        #expect(backend.pagesAsked == [1, 2, 1, 2])
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a refresh during a load drops the load: its page never lands after the refreshed list")
    func refreshDropsLoad() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        backend.delay(by: .milliseconds(1_500))
        let loading = Task { await pager.loadNext() }
        while backend.requests.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let refreshing = Task { await pager.refresh() }
        await loading.value
        // The dropped load ended while the refresh goes on: the pager still says it refreshes,
        // and a loadNext now joins the refresh.
        #expect(pager.activity == .refreshing)
        await pager.loadNext()
        await refreshing.value
        #expect(pager.items.map(\.id) == Array(1...10) && pager.error == nil)
        #expect(backend.pagesAsked == [1, 2, 1])
        try await Task.sleep(for: .milliseconds(500))
        #expect(pager.items.map(\.id) == Array(1...10))
        backend.delay(by: nil)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...20))
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a load whose page arrived but that a failed refresh dropped: the next load gives that page, none is lost")
    func droppedLoadThenFailedRefresh() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        backend.delay(by: .milliseconds(300))
        let loading = Task { await pager.loadNext() }
        while backend.requests.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        // Hold the main actor while page 2 arrives, so its load cannot take it before the
        // refresh begins.
        usleep(800_000)
        backend.delay(by: nil)
        backend.answer(page: 1, with: .text("busy", status: 503))
        await pager.refresh()
        await loading.value
        #expect(pager.items.map(\.id) == Array(1...10) && pager.error?.status == 503)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...20), "page 2 is given, not page 3")
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...30) && pager.lastPage?.index == 2)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("reset during a load drops it: its page never lands, and the next load reads from the first page")
    func resetDuringLoad() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        backend.delay(by: .seconds(1))
        let loading = Task { await pager.loadNext() }
        while backend.requests.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        pager.reset()
        await loading.value
        #expect(pager.items.isEmpty && pager.activity == .idle && pager.error == nil)
        backend.delay(by: nil)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...10))
        #expect(backend.pagesAsked == [1, 2, 1])
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a pager over a list started from a saved position refreshes from the list's first page")
    func refreshFromTheFirstPage() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pages = backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, from: PagePosition(page: 5))
        let pager = Pager(pages)
        await pager.loadNext()
        #expect(pager.items.first?.id == 41)
        await pager.refresh()
        #expect(pager.items.map(\.id) == Array(1...10))
        #expect(backend.pagesAsked == [5, 1])
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a failed load keeps the items and says why; the next loadNext asks for that page again")
    func failureThenRetry() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        backend.answer(page: 2, with: .text("busy", status: 503))
        let pager = Self.pager(backend)
        await pager.loadNext()
        await pager.loadNext()
        #expect(pager.items.count == 10 && pager.error?.status == 503 && !pager.isFinished)
        #expect(pager.error?.pagePosition == PagePosition(page: 2))
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...20) && pager.error == nil)
        #expect(backend.pagesAsked == [1, 2, 2])
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a failed refresh leaves the list as it was, and loading goes on from where it was")
    func failedRefresh() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        backend.answer(page: 1, with: .text("busy", status: 503))
        await pager.refresh()
        #expect(pager.items.map(\.id) == Array(1...10) && pager.error?.status == 503)
        await pager.loadNext()
        #expect(pager.items.map(\.id) == Array(1...20) && pager.error == nil)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("after a logout, loadNext fails and sends nothing; refresh reads the list as the new user")
    func sessionChange() async throws {
        let session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "ann", userID: "ann")))
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        await pager.loadNext()
        try await session.logIn(Credential(accessToken: "bob", userID: "bob"))
        await pager.loadNext()
        #expect(pager.error?.code == .cancelled && pager.items.count == 10)
        await pager.loadNext()
        #expect(pager.error?.code == .cancelled, "tried again, still the old session's walk")
        await pager.refresh()
        #expect(pager.error == nil && pager.items.map(\.id) == Array(1...10))
        #expect(backend.requests.map { $0.headers["token"] ?? "-" } == ["ann", "bob"])
        pager.reset()
        #expect(pager.items.isEmpty && !pager.isFinished && pager.lastPage == nil)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("SwiftUI hears of each change: an observer of items is told when a page lands")
    func observable() async throws {
        let backend = try ListBackend()
        defer { backend.server.stop() }
        let pager = Self.pager(backend)
        let changed = Flag()
        withObservationTracking {
            _ = pager.items
        } onChange: {
            changed.set()
        }
        #expect(!changed.isSet)
        await pager.loadNext()
        #expect(changed.isSet)
    }
}
