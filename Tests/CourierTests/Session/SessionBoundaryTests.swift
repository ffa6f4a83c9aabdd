import Courier
import CourierTesting
import Foundation
import Testing

/// A logout or an account switch at each wait of the session's work: a refresh (its fetch, the
/// pause between its attempts, its store write), a silent login, a login, a request on the wire.
/// Whatever the moment, nothing of the old session is sent or stored afterwards, and nobody is
/// signed back in.
@Suite struct SessionBoundaryTests {
    /// A backend whose `/v1/data` takes only the tokens in `valid` (else 401), whose `/v1/refresh`
    /// answers 503 (a refresh that fails), and whose `/v1/login` issues `s1`.
    static func backend(valid: Set<String>) throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("/v1/data") { request in
            valid.contains(request.headers["token"] ?? "")
                ? .envelope(data: request.headers["token"] ?? "") : .init(status: 401)
        }
        server.route("/v1/refresh") { _ in .json(#"{"error":"busy"}"#, status: 503) }
        server.route("/v1/login") { _ in .envelope(data: "s1") }
        return server
    }

    static func client(_ server: LoopbackServer, _ session: Session) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                transport: TestTransport.make()))
    }

    static let ann = Credential(accessToken: "old", refreshToken: "r1", userID: "ann")
    static let bob = Credential(accessToken: "bob", userID: "bob")
    static let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)

    /// Waits until the session's renewals have ended, those a logout stopped too (the limit only
    /// ends a wait for one that never ends).
    static func renewalsEnded(_ session: Session) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while session.renewalsRunning > 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test("a logout while a refresh runs: its token is dropped, nothing is sent with it, and the user stays logged out")
    func logoutDuringRefresh() async throws {
        let server = try Self.backend(valid: ["new"])
        defer { server.stop() }
        let store = InMemoryTokenStore(credential: Self.ann)
        let gate = Gate()
        let session = Session(
            store: store,
            refresh: { _ in
                await gate.pass()
                return Credential(accessToken: "new")
            })
        let client = Self.client(server, session)

        let request = Task { try await client.send(Self.data) }
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()
        let error = await networkError { _ = try await request.value }
        #expect(await Self.renewalsEnded(session))

        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(await store.credential() == nil, "the logged-out session stays logged out")
        #expect(try await session.credential() == nil)
        #expect(!server.requests.contains { $0.headers["token"] == "new" })
    }

    @Test("a logout while a failed refresh waits to try again: the old refresh token is never sent again")
    func logoutDuringRefreshPause() async throws {
        let server = try Self.backend(valid: ["new"])
        defer { server.stop() }
        let failed = Gate()
        failed.open()
        // A pause no test waits out: the logout must end it.
        let session = Session(
            store: InMemoryTokenStore(credential: Self.ann),
            limits: .init(refreshAttempts: 3, refreshBackoff: .seconds(60)),
            refresh: { refresh in
                do {
                    return Credential(
                        accessToken: try await refresh.client.send(
                            Endpoint<String>.post(
                                "refresh", body: .form(["token": refresh.previous.refreshToken ?? ""]))))
                } catch {
                    await failed.pass()
                    throw error
                }
            })
        let client = Self.client(server, session)

        let request = Task { try await client.send(Self.data) }
        await failed.arrivals(1)
        try await session.logOut()
        let error = await networkError { _ = try await request.value }
        #expect(await Self.renewalsEnded(session), "the pause ended with the logout")

        #expect(error?.code == .cancelled)
        #expect(server.requests.filter { $0.path == "/v1/refresh" }.map { $0.form["token"] } == ["r1"])
        #expect(try await session.credential() == nil)
    }

    @Test("a logout while a silent login runs does not sign the user back in, whatever the login does")
    func logoutDuringSilentLogin() async throws {
        let server = try Self.backend(valid: ["s1"])
        defer { server.stop() }
        server.route("/v1/data") { _ in .json(#"{"code":99,"msg":"not logged in"}"#) }
        let store = InMemoryTokenStore(credential: Self.ann)
        let gate = Gate()
        let outcome = Log()
        let session = Session(
            store: store, logInCodes: [99],
            logIn: { login in
                await gate.pass()
                // A login that sends after the logout is refused; one that made its token by
                // other means returns it all the same.
                do {
                    _ = try await login.client.send(Endpoint<String>.post("login"))
                    outcome.append("sent")
                } catch let error as NetworkError {
                    outcome.append(error.code.rawValue)
                }
                return Credential(accessToken: "s1")
            })
        let events = session.events()
        let client = Self.client(server, session)

        let request = Task { try await client.send(Self.data) }
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()
        let error = await networkError { _ = try await request.value }
        #expect(await Self.renewalsEnded(session))

        #expect(error?.code == .cancelled)
        #expect(outcome.all == ["cancelled"])
        #expect(!server.requests.contains { $0.path == "/v1/login" })
        #expect(await store.credential() == nil)
        #expect(try await session.credential() == nil)
        #expect(await SilentLoginTests.events(events, until: .loggedOut) == [.reLoginNeeded, .loggedOut])
    }

    @Test("a login as someone else while a refresh runs: the refresh stores nothing, and the new user stays")
    func switchDuringRefresh() async throws {
        let server = try Self.backend(valid: ["new", "bob"])
        defer { server.stop() }
        let store = InMemoryTokenStore(credential: Self.ann)
        let gate = Gate()
        let session = Session(
            store: store,
            refresh: { _ in
                await gate.pass()
                return Credential(accessToken: "new")
            })
        let client = Self.client(server, session)

        let request = Task { try await client.send(Self.data) }
        await gate.arrivals(1)
        try await session.logIn(Self.bob)
        gate.open()
        let error = await networkError { _ = try await request.value }
        #expect(await Self.renewalsEnded(session))
        let next = try await client.send(Self.data)

        #expect(error?.code == .cancelled)
        #expect(await store.credential() == Self.bob)
        #expect(next == "bob")
        #expect(!server.requests.contains { $0.headers["token"] == "new" })
    }

    /// A store whose writes wait at a gate while `holding` is set: a keychain write under way.
    final class SlowStore: TokenStore, @unchecked Sendable {
        private let lock = NSLock()
        private var current: Credential?
        let gate = Gate()
        /// Holds writes at `gate`.
        let holding = Flag()
        /// Holds reads at `gate`.
        let holdingReads = Flag()

        init(_ credential: Credential?) { current = credential }

        var value: Credential? { lock.withLock { current } }

        func credential() async throws -> Credential? {
            if holdingReads.isSet { await gate.pass() }
            return lock.withLock { current }
        }

        func setCredential(_ credential: Credential?) async throws {
            if holding.isSet { await gate.pass() }
            lock.withLock { current = credential }
        }

        func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool {
            if holding.isSet { await gate.pass() }
            return lock.withLock {
                guard current == expected else { return false }
                current = credential
                return true
            }
        }
    }

    @Test("a logout while a refreshed token is being stored: the logout wins, in the store and in the session")
    func logoutDuringStoreWrite() async throws {
        let server = try Self.backend(valid: ["new"])
        defer { server.stop() }
        let store = SlowStore(Self.ann)
        store.holding.set()
        let session = Session(store: store, refresh: { _ in Credential(accessToken: "new") })
        let client = Self.client(server, session)

        let request = Task { try await client.send(Self.data) }
        await store.gate.arrivals(1)
        let logout = Task { try await session.logOut() }
        // The logout's own write waits for the refresh's, then passes the open gate.
        store.gate.open()
        try await logout.value
        let error = await networkError { _ = try await request.value }

        #expect(error?.code == .cancelled)
        #expect(store.value == nil)
        #expect(try await session.credential() == nil)
        #expect(!server.requests.contains { $0.headers["token"] == "new" })
    }

    @Test("a logout called while a login is still being stored wins: nobody is signed in afterwards")
    func logoutDuringLogin() async throws {
        let store = SlowStore(Self.ann)
        let session = Session(store: store)
        #expect(try await session.credential() == Self.ann)
        store.holding.set()

        let login = Task { try await session.logIn(Self.bob) }
        await store.gate.arrivals(1)
        let logout = Task { try await session.logOut() }
        // The logout has begun once the session shows nobody signed in; its write waits for the
        // login's (the limit only ends a wait for one that never begins).
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while try await session.credential() != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        store.gate.open()
        try await Self.expectLogoutWon(login: login, logout: logout, store: store, session: session)
    }

    @Test("a logout called while a first login still reads the store wins: nobody is signed in afterwards")
    func logoutWhileLoginReadsTheStore() async throws {
        let store = SlowStore(Self.ann)
        let session = Session(store: store)
        let events = session.events()
        store.holdingReads.set()

        let login = Task { try await session.logIn(Self.bob) }
        await store.gate.arrivals(1)
        let logout = Task { try await session.logOut() }
        for await event in events where event == .loggedOut { break }
        store.holdingReads.clear()
        store.gate.open()
        try await Self.expectLogoutWon(login: login, logout: logout, store: store, session: session)
    }

    /// The end of a race of a login and a logout: the login fails cancelled, and nobody is signed
    /// in, in the store or the session.
    private static func expectLogoutWon(
        login: Task<Void, any Error>, logout: Task<Void, any Error>, store: SlowStore, session: Session
    ) async throws {
        let loginError = await networkError { try await login.value }
        try await logout.value
        #expect(loginError?.code == .cancelled)
        #expect(store.value == nil)
        #expect(try await session.credential() == nil)
    }

    @Test("a login waiting behind another for the store gives way to a logout called after it")
    func logoutAfterQueuedLogin() async throws {
        let store = SlowStore(Self.ann)
        let session = Session(store: store)
        #expect(try await session.credential() == Self.ann)
        store.holding.set()
        let carol = Credential(accessToken: "carol", userID: "carol")

        let first = Task { try await session.logIn(carol) }
        await store.gate.arrivals(1)
        let second = Task { try await session.logIn(Self.bob) }
        // Time for the second login to be called and queue behind the first. Were it called
        // after the logout instead, it would sign Bob in and the test would fail, not pass.
        try await Task.sleep(for: .milliseconds(200) * TestTiming.scale)
        let logout = Task { try await session.logOut() }
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while try await session.credential() != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        store.gate.open()
        let errors = [await networkError { try await first.value }, await networkError { try await second.value }]
        try await logout.value

        #expect(errors.map { $0?.code } == [.cancelled, .cancelled])
        #expect(store.value == nil)
        #expect(try await session.credential() == nil, "nobody signed in after the logout")
    }

    @Test("an answer that arrives after a login as someone else is not given: the request ends cancelled")
    func switchWhileOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let gate = Gate()
        server.route("/v1/profile") { request in
            await gate.pass()
            return .envelope(data: "\(request.headers["token"] ?? "nobody")'s profile")
        }
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let client = Self.client(server, session)
        let profile = Endpoint<String>.get("profile")

        let request = Task { try await client.send(profile) }
        await gate.arrivals(1)
        try await session.logIn(Self.bob)
        gate.open()
        let error = await networkError { _ = try await request.value }

        #expect(error?.code == .cancelled)
        #expect(try await client.send(profile) == "bob's profile")
    }

    @Test("a session the backend ended is announced once for all its requests, and a later session gets its own end")
    func oneEndPerSession() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/data") { _ in .json(#"{"code":500,"msg":"logged in elsewhere"}"#) }
        let session = Session(store: InMemoryTokenStore(credential: Self.ann), askUserCodes: [500])
        let events = session.events()
        let client = Self.client(server, session)

        for round in 1...2 {
            if round == 2 { try await session.logIn(Self.bob) }
            let errors = await withTaskGroup(of: NetworkError.Code?.self) { group in
                for _ in 0..<5 { group.addTask { await networkError { _ = try await client.send(Self.data) }?.code } }
                return await group.reduce(into: [NetworkError.Code?]()) { $0.append($1) }
            }
            #expect(errors.allSatisfy { $0 == .sessionExpired || $0 == .business }, "\(errors)")
            #expect(errors.contains(.sessionExpired))
        }
        let seen = await SilentLoginTests.events(events, until: .loggedIn)
        #expect(seen == [.sessionExpired, .loggedIn], "one end for the first session")
        #expect(
            await SilentLoginTests.events(events, until: .sessionExpired) == [.sessionExpired], "one for the second")
    }
}
