import Courier
import CourierTesting
import Foundation
import Testing

/// The token refresh at its edges: short-lived tokens, logouts and logins that land between its
/// steps, cancellation, and a store read that spans a whole refresh.
@Suite struct TokenRefreshEdgeTests {
    /// A store whose reads run a test's hook (after taking the value, so a hook that waits makes
    /// the read return what was there when it began).
    final class ScriptedStore: TokenStore, @unchecked Sendable {
        private let lock = NSLock()
        private var current: Credential?
        private var reads = 0
        private let hook: @Sendable (_ read: Int, _ store: ScriptedStore) async throws -> Void

        init(
            _ credential: Credential?,
            hook: @escaping @Sendable (_ read: Int, _ store: ScriptedStore) async throws -> Void = { _, _ in }
        ) {
            current = credential
            self.hook = hook
        }

        var value: Credential? { lock.withLock { current } }

        func credential() async throws -> Credential? {
            let (number, value) = lock.withLock {
                reads += 1
                return (reads, current)
            }
            try await hook(number, self)
            return value
        }

        func setCredential(_ credential: Credential?) async throws { lock.withLock { current = credential } }

        func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool {
            lock.withLock {
                guard current == expected else { return false }
                current = credential
                return true
            }
        }
    }

    /// A backend that answers `data` with the token it got, and 401 for `a1`.
    static func transport() -> MockTransport {
        MockTransport { request in
            let token = request.headers["token"] ?? ""
            return token == "a1" ? .init(status: 401) : try .envelope(data: token)
        }
    }

    static func client(
        _ store: any TokenStore, transport: MockTransport = transport(), attempts: Int = 1,
        fetch: @escaping @Sendable (TokenRefresh) async throws -> Credential
    ) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!,
                interceptors: [
                    .token(store: store, fetchAttempts: attempts, fetchBackoff: .milliseconds(10), fetch: fetch)
                ],
                transport: transport))
    }

    @Test(
        "a token that lives shorter than the leeway, or arrives expired, is fetched once, not before every request",
        arguments: [20.0, -10.0])
    func shortLivedToken(lifetime: TimeInterval) async throws {
        let fetches = Counter()
        let client = Self.client(InMemoryTokenStore()) { _ in
            Credential(accessToken: "t\(fetches.increment())", expiresAt: Date().addingTimeInterval(lifetime))
        }
        for _ in 0..<6 { #expect(try await client.send(Endpoint<String>.get("data")) == "t1") }
        #expect(fetches.increment() == 2, "one fetch, then this probe")
    }

    @Test("a lifetime no clock can hold (1e300 seconds) is a long one, not a crash")
    func hugeLifetime() async throws {
        let fetches = Counter()
        let client = Self.client(InMemoryTokenStore()) { _ in
            Credential(accessToken: "t\(fetches.increment())", expiresAt: Date().addingTimeInterval(1e300))
        }
        for _ in 0..<3 { #expect(try await client.send(Endpoint<String>.get("data")) == "t1") }
    }

    @Test("a logout between the expiry check and the refresh is not undone by the refresh")
    func logoutBeforeEarlyRefresh() async throws {
        let expiring = Credential(accessToken: "a0", refreshToken: "r0", expiresAt: Date().addingTimeInterval(5))
        // The app logs out just after the token layer's first read.
        let store = ScriptedStore(expiring) { read, store in
            if read == 1 { try await store.setCredential(nil) }
        }
        let client = Self.client(store) { _ in Credential(accessToken: "a2") }
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(store.value == nil, "still logged out")
    }

    @Test("cancelAll during a fetch ends the refresh: the fetch is not sent again")
    func cancelledFetchNotRetried() async throws {
        let fetches = Counter()
        let started = Gate()
        started.open()
        let transport = MockTransport { request in
            if request.url.path.hasSuffix("/refresh") { try await Task.sleep(for: .seconds(30)) }
            return try .envelope(data: request.headers["token"] ?? "")
        }
        let client = Self.client(InMemoryTokenStore(), transport: transport, attempts: 3) { refresh in
            _ = fetches.increment()
            await started.pass()
            return Credential(accessToken: try await refresh.client.send(Endpoint<String>.get("refresh")))
        }
        let request = Task { await networkError { _ = try await client.send(Endpoint<String>.get("data")) } }
        await started.arrivals(1)
        try await Task.sleep(for: .milliseconds(50))
        client.cancelAll()
        #expect(await request.value?.code == .cancelled)
        try await Task.sleep(for: .milliseconds(300))
        #expect(fetches.increment() == 2, "one fetch, then this probe")
    }

    @Test("a fetch that fails after the app logged in (inside it or beside it) gives the new login, once")
    func loginDuringFailedFetch() async throws {
        let store = InMemoryTokenStore(credential: Credential(accessToken: "a1"))
        let fetches = Counter()
        struct RefreshRefused: Error {}
        let client = Self.client(store, attempts: 3) { _ in
            _ = fetches.increment()
            await store.setCredential(Credential(accessToken: "a3"))
            throw RefreshRefused()
        }
        #expect(try await client.send(Endpoint<String>.get("data")) == "a3")
        #expect(fetches.increment() == 2, "one fetch, then this probe")
    }

    @Test("a fetch that fails after the app logged out is not tried again with the old session's token")
    func logoutDuringFailedFetch() async throws {
        let store = InMemoryTokenStore(credential: Credential(accessToken: "a1", refreshToken: "r1"))
        let fetches = Counter()
        struct Unreachable: Error {}
        let client = Self.client(store, attempts: 3) { _ in
            _ = fetches.increment()
            await store.setCredential(nil)
            throw Unreachable()
        }
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(fetches.increment() == 2, "one fetch, then this probe")
        #expect(await store.credential() == nil, "still logged out")
    }

    @Test("a store read that is cancelled fails the request as cancelled")
    func cancelledRead() async throws {
        let store = ScriptedStore(nil) { _, _ in throw CancellationError() }
        let client = Self.client(store) { _ in Credential(accessToken: "a2") }
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .cancelled)
    }

    @Test("a store read that began before a refresh and ends after it does not start a second refresh")
    func readSpanningARefresh() async throws {
        let slowRead = Gate()
        // Y's second read (after its 401) waits until X has refreshed, then returns the old `a1`.
        let store = ScriptedStore(Credential(accessToken: "a1")) { read, _ in
            if read == 2 { await slowRead.pass() }
        }
        let fetches = Counter()
        let client = Self.client(store) { _ in Credential(accessToken: "a\(fetches.increment() + 1)") }
        let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
        let y = Task { try await client.send(data) }
        await slowRead.arrivals(1)
        #expect(try await client.send(data) == "a2", "X refreshed")
        slowRead.open()
        #expect(try await y.value == "a2", "Y got X's token")
        #expect(fetches.increment() == 2, "one fetch, then this probe")
    }
}
