import Courier
import CourierTesting
import Foundation
import Testing

/// The session's renewals at their edges: what they renew, stores that keep a credential less
/// precisely, credentials stored by an older version, answers that arrive late, and a logout or
/// login that meets another one under way.
@Suite struct SessionRenewalTests {
    /// A store that keeps a credential as a simple keychain store would: the expiry to the
    /// second, and no user ID.
    actor LossyStore: TokenStore {
        private var kept: Credential?
        init(_ credential: Credential?) { kept = credential.map(Self.lossy) }
        static func lossy(_ credential: Credential) -> Credential {
            Credential(
                accessToken: credential.accessToken, refreshToken: credential.refreshToken,
                expiresAt: credential.expiresAt.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded()) })
        }
        func credential() -> Credential? { kept }
        func setCredential(_ credential: Credential?) { kept = credential.map(Self.lossy) }
    }

    /// A transport that answers `/data` with the token it got when it is `valid`, and 401
    /// otherwise.
    static func transport(valid: @escaping @Sendable (String) -> Bool) -> MockTransport {
        MockTransport { request in
            let token = request.headers["token"] ?? ""
            return valid(token) ? try .envelope(data: token) : .init(status: 401)
        }
    }

    static func client(_ session: Session, _ transport: MockTransport) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session, transport: transport))
    }

    @Test("a store that keeps the expiry to the second and no user ID still takes every refresh")
    func lossyStore() async throws {
        let refreshes = Counter()
        let wanted = Counter()
        let session = Session(
            store: LossyStore(nil),
            refresh: { _ in
                Credential(accessToken: "t\(refreshes.increment())", expiresAt: Date().addingTimeInterval(3600.4))
            })
        // The backend takes only the newest token; the test moves it on.
        let client = Self.client(session, Self.transport { $0 == "t\(wanted.current)" })
        try await session.logIn(
            Credential(accessToken: "t0", expiresAt: Date().addingTimeInterval(3600.4), userID: "ann"))

        for round in 1...3 {
            _ = wanted.increment()
            #expect(try await client.send(Endpoint<String>.get("data")) == "t\(round)")
        }
        #expect(refreshes.current == 3)
        #expect(try await session.credential()?.userID == "ann", "the user stays")
    }

    @Test("a credential stored without a user (by an earlier version) takes the user a refresh names")
    func storedWithoutUser() async throws {
        let store = InMemoryTokenStore(credential: Credential(accessToken: "old"))
        let session = Session(
            store: store, refresh: { _ in Credential(accessToken: "new", userID: "42") })
        let client = Self.client(session, Self.transport { $0 == "new" })

        #expect(try await client.send(Endpoint<String>.get("data")) == "new")
        #expect(await store.credential()?.userID == "42")
    }

    @Test("a login for a request sent before a refresh renews the refreshed credential, not the one it was sent with")
    func loginRenewsTheCurrentCredential() async throws {
        let gate = Gate()
        let previous = Log()
        // `/late` holds its answer (99 for a request sent with t0) until the refresh is done.
        let transport = MockTransport { request in
            let token = request.headers["token"] ?? ""
            if request.url.path.hasSuffix("/late"), token == "t0" {
                await gate.pass()
                return .json(#"{"code":99,"msg":"not logged in"}"#)
            }
            return token == "t0" ? .init(status: 401) : try .envelope(data: token)
        }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t0", userID: "ann")), logInCodes: [99],
            refresh: { _ in Credential(accessToken: "t1") },
            logIn: { login in
                previous.append(login.previous.accessToken)
                return Credential(accessToken: "t2")
            })
        let client = Self.client(session, transport)

        let late = Task { try await client.send(Endpoint<String>.get("late")) }
        await gate.arrivals(1)
        #expect(try await client.send(Endpoint<String>.get("data")) == "t1", "refreshed meanwhile")
        gate.open()

        #expect(try await late.value == "t2")
        #expect(previous.all == ["t1"])
    }

    @Test("an ask-the-user answer to a credential the session's own login replaced is sent again, not the end")
    func askUserForAReplacedCredential() async throws {
        let gate = Gate()
        // One login per account: once t1 exists, t0 is "logged in elsewhere".
        let transport = MockTransport { request in
            switch request.headers["token"] ?? "" {
            case "t0" where request.url.path.hasSuffix("/late"):
                await gate.pass()
                return .json(#"{"code":500,"msg":"logged in elsewhere"}"#)
            case "t0": return .json(#"{"code":99,"msg":"not logged in"}"#)
            case let token: return try .envelope(data: token)
            }
        }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t0", userID: "ann")), logInCodes: [99],
            askUserCodes: [500], logIn: { _ in Credential(accessToken: "t1") })
        let events = session.events()
        let client = Self.client(session, transport)

        let late = Task { try await client.send(Endpoint<String>.get("late")) }
        await gate.arrivals(1)
        #expect(try await client.send(Endpoint<String>.get("data")) == "t1")
        gate.open()

        #expect(try await late.value == "t1")
        #expect(try await session.credential()?.accessToken == "t1", "still signed in")
        #expect(await SilentLoginTests.events(events, until: .reLoginSucceeded) == [.reLoginNeeded, .reLoginSucceeded])
    }

    @Test("limits set to nothing after they were made still allow one try")
    func limitsClamped() async throws {
        var limits = Session.Limits()
        limits.refreshAttempts = 0
        limits.refreshes = 0
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old")), limits: limits,
            refresh: { _ in Credential(accessToken: "new") })
        #expect(
            try await Self.client(session, Self.transport { $0 == "new" }).send(Endpoint<String>.get("data")) == "new")
    }

    @Test("a caller cancelled while it waits for a refresh before a login ends at once, and starts no login")
    func cancelledWhileARefreshRuns() async throws {
        let gate = Gate()
        let logins = Counter()
        let transport = MockTransport { request in
            let token = request.headers["token"] ?? ""
            guard token == "t0" else { return try .envelope(data: token) }
            return request.url.path.hasSuffix("/login-needed")
                ? .json(#"{"code":99,"msg":"log in"}"#) : .init(status: 401)
        }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t0")), logInCodes: [99],
            refresh: { _ in
                await gate.pass()
                return Credential(accessToken: "t1")
            },
            logIn: { _ in
                _ = logins.increment()
                return Credential(accessToken: "t2")
            })
        let client = Self.client(session, transport)

        let refreshing = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)
        let waiting = Task { try await client.send(Endpoint<String>.get("login-needed")) }
        // The second request has met its 99 (and waits for the refresh, or soon will); the limit
        // only ends a wait for a request that never goes out.
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while transport.requests.count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        waiting.cancel()
        // The refresh is held until after this: an answer at all proves the caller did not wait.
        let error = await result(within: .seconds(10) * TestTiming.scale) {
            await networkError { _ = try await waiting.value }
        }
        gate.open()

        #expect(error??.code == .cancelled)
        #expect(try await refreshing.value == "t1")
        #expect(logins.current == 0)
    }

    @Test("cancelAll() leaves a refresh on the wire alone: its token is stored, and later requests use it")
    func cancelAllKeepsTheRefresh() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let gate = Gate()
        server.route("/v1/refresh", method: .post) { _ in
            await gate.pass()
            return .envelope(data: "new")
        }
        server.route("/v1/data") { request in
            request.headers["token"] == "new" ? .envelope(data: "ok") : .init(status: 401)
        }
        let store = InMemoryTokenStore(credential: Credential(accessToken: "old", refreshToken: "once"))
        let session = Session(
            store: store,
            refresh: { refresh in
                Credential(accessToken: try await refresh.client.send(Endpoint<String>.post("refresh")))
            })
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                transport: TestTransport.make()))

        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)
        client.cancelAll()
        let error = await networkError { _ = try await request.value }
        gate.open()
        #expect(await SessionBoundaryTests.renewalsEnded(session))

        #expect(error?.code == .cancelled)
        #expect(await store.credential()?.accessToken == "new")
        #expect(try await client.send(Endpoint<String>.get("data")) == "ok")
    }

    @Test("a login called while a logout still empties the caches signs in, in the store and in the session")
    func loginDuringLogout() async throws {
        let purging = Gate()
        let cache = HookedStore(purge: { await purging.pass() })
        let store = InMemoryTokenStore(credential: Credential(accessToken: "ann", userID: "ann"))
        let session = Session(store: store)
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session,
                cache: ResponseCache(store: cache), transport: MockTransport { _ in .json(#"{"code":0}"#) }))
        let events = session.events()

        let logout = Task { try await session.logOut() }
        await purging.arrivals(1)
        try await session.logIn(Credential(accessToken: "bob", userID: "bob"))
        purging.open()
        try await logout.value

        #expect(await store.credential()?.accessToken == "bob")
        #expect(try await session.credential()?.accessToken == "bob")
        #expect(await SilentLoginTests.events(events, until: .loggedIn) == [.loggedOut, .loggedIn])
        withExtendedLifetime(client) {}
    }

    @Test("a login while the first request still reads the store: that request is not sent with the new user's token")
    func loginDuringTheFirstRead() async throws {
        let reading = Gate()
        let writing = Gate()
        let store = SlowFirstRead(
            reading: reading, writing: writing, credential: Credential(accessToken: "ann", userID: "ann"))
        let transport = MockTransport { request in try .envelope(data: request.headers["token"] ?? "") }
        let session = Session(store: store)
        let client = Self.client(session, transport)

        let first = Task { try await client.send(Endpoint<String>.get("data")) }
        await reading.arrivals(1)
        let login = Task { try await session.logIn(Credential(accessToken: "bob", userID: "bob")) }
        // The login waits for the read; were it not to, its write would land now (the limit only
        // gives a write that does not wait the time to happen).
        let deadline = ContinuousClock.now + .milliseconds(200)
        while await store.writes == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        reading.open()
        let outcome = await first.result
        writing.open()
        try await login.value

        #expect(!transport.requests.contains { $0.headers["token"] == "bob" }, "never sent with the new user's token")
        if case .success(let token) = outcome { #expect(token == "ann") }
        #expect(try await client.send(Endpoint<String>.get("data")) == "bob")
    }

    /// A store whose first read waits at `reading` and answers what it holds then, whose later
    /// reads fail (a keychain that locked meanwhile), and whose first write waits at `writing`
    /// once written.
    actor SlowFirstRead: TokenStore {
        struct Locked: Error {}
        let reading: Gate
        let writing: Gate
        private var kept: Credential?
        private var reads = 0
        private(set) var writes = 0
        init(reading: Gate, writing: Gate, credential: Credential?) {
            (self.reading, self.writing) = (reading, writing)
            kept = credential
        }
        func credential() async throws -> Credential? {
            reads += 1
            if reads == 1 { await reading.pass() } else if reads == 2 { throw Locked() }
            return kept
        }
        func setCredential(_ credential: Credential?) async {
            writes += 1
            kept = credential
            if writes == 1 { await writing.pass() }
        }
    }

    @Test("an ask-the-user answer that arrives after a logout ends nothing more: the request is cancelled")
    func askUserAfterLogout() async throws {
        let gate = Gate()
        let transport = MockTransport { _ in
            await gate.pass()
            return .json(#"{"code":500,"msg":"logged in elsewhere"}"#)
        }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "ann")), askUserCodes: [500])
        let client = Self.client(session, transport)

        // Not shared, so the caller waits for the answer, not only for its own cancellation.
        let request = Task { try await client.send(Endpoint<String>.get("data").sharingIdenticalRequests(false)) }
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()

        #expect(await networkError { _ = try await request.value }?.code == .cancelled)
    }
}
