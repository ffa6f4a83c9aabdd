import Courier
import CourierTesting
import Foundation
import Testing

/// A list's walk and the session: a silent login in the middle continues it; a logout or a login
/// as someone else at any wait ends it, and nothing more is sent or given.
@Suite struct PagingSessionTests {
    typealias OrderList = ListBackend.OrderList
    static let byPage = Paging<OrderList, Order>.pageNumber(size: ListBackend.size)

    static func signedIn(_ logins: Counter? = nil) -> Session {
        Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "ann-1", userID: "ann")),
            logInCodes: [99], askUserCodes: [500],
            logIn: { _ in Credential(accessToken: "ann-\((logins?.increment() ?? 0) + 1)", userID: "ann") })
    }

    @Test("a 99 on page 3 logs in again once, then page 3 is asked for again and the walk goes on")
    func reLoginInTheMiddle() async throws {
        let logins = Counter()
        let session = Self.signedIn(logins)
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        backend.answer(page: 3, with: .json(#"{"code":99,"msg":"log in again"}"#))
        var ids: [Int] = []
        for try await order in backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).items {
            ids.append(order.id)
        }
        #expect(ids == Array(1...ListBackend.count))
        #expect(logins.current == 1)
        #expect(backend.pagesAsked == [1, 2, 3, 3] + Array(4...ListBackend.pages))
        let tokens = backend.requests.map { $0.headers["token"] ?? "-" }
        #expect(tokens == ["ann-1", "ann-1", "ann-1"] + Array(repeating: "ann-2", count: 8))
    }

    @Test("a 500 on page 3 ends the session: the walk throws sessionExpired and asks for no more")
    func askUserInTheMiddle() async throws {
        let backend = try ListBackend { $0.session = Self.signedIn() }
        defer { backend.server.stop() }
        backend.answer(page: 3, with: .json(#"{"code":500,"msg":"logged in elsewhere"}"#))
        var ids: [Int] = []
        let error = await networkError {
            for try await order in backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).items {
                ids.append(order.id)
            }
        }
        #expect(error?.code == .sessionExpired && error?.pagePosition == PagePosition(page: 3))
        #expect(ids == Array(1...20) && backend.pagesAsked == [1, 2, 3])
    }

    enum Change: String, CaseIterable, Sendable {
        case logout, otherUser
        func apply(to session: Session) async throws {
            switch self {
            case .logout: try await session.logOut()
            case .otherUser: try await session.logIn(Credential(accessToken: "bob-1", userID: "bob"))
            }
        }
    }

    @Test(
        "a logout or another login between two pages: the next page throws, and nothing is sent",
        arguments: Change.allCases)
    func betweenPages(_ change: Change) async throws {
        let session = Self.signedIn()
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).makeAsyncIterator()
        _ = try await iterator.next()
        _ = try await iterator.next()
        try await change.apply(to: session)
        let error = await networkError { _ = try await iterator.next() }
        #expect(error?.code == .cancelled && error?.pagePosition == PagePosition(page: 3))
        #expect(try await iterator.next() == nil)
        #expect(backend.pagesAsked == [1, 2])
    }

    @Test("a logout or another login while a page is on its way: the walk throws at once", arguments: Change.allCases)
    func whileAPageIsSent(_ change: Change) async throws {
        let session = Self.signedIn()
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage).makeAsyncIterator()
        _ = try await iterator.next()
        backend.delay(by: .seconds(30))
        let second = Task { [iterator] in
            var copy = iterator
            return try await copy.next()
        }
        #expect(await backend.server.waitForEvents { _ in backend.requests.count == 2 })
        let started = ContinuousClock.now
        try await change.apply(to: session)
        let error = await networkError { _ = try await second.value }
        #expect(error?.code == .cancelled && ContinuousClock.now - started < .seconds(10))
        #expect(backend.pagesAsked == [1, 2] && backend.client.activeRequestCount == 0)
    }

    @Test("a page read ahead before a logout is not given after it", arguments: Change.allCases)
    func readAheadThenLogout(_ change: Change) async throws {
        let session = Self.signedIn()
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        let options = PagingOptions(prefetchesNextPage: true)
        var iterator = backend.client.pages(ListBackend.orders, items: \.list, paging: Self.byPage, options: options)
            .makeAsyncIterator()
        _ = try await iterator.next()
        #expect(await backend.server.waitForEvents { _ in backend.requests.count == 2 })
        // The page read ahead has arrived (or is about to): the logout comes after it.
        try await Task.sleep(for: .milliseconds(100))
        try await change.apply(to: session)
        let error = await networkError { _ = try await iterator.next() }
        #expect(error?.code == .cancelled)
        #expect(backend.pagesAsked == [1, 2])
    }

    @Test("a walk begun after the logout reads the list anew, as the new user")
    func freshWalkAfterLogin() async throws {
        let session = Self.signedIn()
        let backend = try ListBackend { $0.session = session }
        defer { backend.server.stop() }
        let pages = backend.client.pages(
            ListBackend.orders, items: \.list, paging: Self.byPage, options: .init(maximumPages: 2))
        for try await _ in pages {}
        try await Change.otherUser.apply(to: session)
        for try await _ in pages {}
        #expect(backend.requests.map { $0.headers["token"] ?? "-" } == ["ann-1", "ann-1", "bob-1", "bob-1"])
    }
}
