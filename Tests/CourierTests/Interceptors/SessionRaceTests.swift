import Courier
import CourierTesting
import Foundation
import Testing

/// What happens when the app changes the session, or a caller gives up, while a token refresh
/// or a re-login is running: the app's choice wins, and nobody waits for work they left.
@Suite struct SessionRaceTests {
    /// A backend whose `/v1/data` accepts only the tokens in `valid` (else 401).
    static func backend(valid: Set<String>) throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("/v1/data") { request in
            valid.contains(request.headers["token"] ?? "")
                ? .envelope(data: request.headers["token"] ?? "") : .init(status: 401)
        }
        return server
    }

    static func client(_ server: LoopbackServer, _ interceptors: [any Interceptor]) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), interceptors: interceptors,
                transport: TestTransport.make()))
    }

    @Test("a logout while a refresh runs is not undone: the refreshed token is dropped")
    func logoutDuringRefresh() async throws {
        let server = try Self.backend(valid: ["new"])
        defer { server.stop() }
        let store = InMemoryTokenStore(credential: Credential(accessToken: "old"))
        let gate = Gate()
        let client = Self.client(
            server,
            [
                .token(store: store) { _ in
                    await gate.pass()
                    return Credential(accessToken: "new")
                }
            ])

        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)
        await store.setCredential(nil)
        gate.open()
        let error = await networkError { _ = try await request.value }

        #expect(error?.code == .tokenRefreshFailed, "\(String(describing: error))")
        #expect(await store.credential() == nil, "the logged-out session stays logged out")
        #expect(!server.requests.contains { $0.headers["token"] == "new" })
    }

    @Test("a new login while a refresh runs wins: the request is replayed with its token")
    func loginDuringRefresh() async throws {
        let server = try Self.backend(valid: ["new", "login"])
        defer { server.stop() }
        let store = InMemoryTokenStore(credential: Credential(accessToken: "old"))
        let gate = Gate()
        let client = Self.client(
            server,
            [
                .token(store: store) { _ in
                    await gate.pass()
                    return Credential(accessToken: "new")
                }
            ])

        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)
        await store.setCredential(Credential(accessToken: "login"))
        gate.open()

        #expect(try await request.value == "login")
        #expect(await store.credential()?.accessToken == "login")
    }

    @Test("a caller cancelled while a refresh runs ends at once; the refresh goes on for the others")
    func cancelDuringRefresh() async throws {
        let server = try Self.backend(valid: ["new"])
        defer { server.stop() }
        let gate = Gate()
        let fetches = Counter()
        let client = Self.client(
            server,
            [
                .token(store: InMemoryTokenStore(credential: Credential(accessToken: "old"))) { _ in
                    _ = fetches.increment()
                    await gate.pass()
                    return Credential(accessToken: "new")
                }
            ])
        // `leaving` starts the refresh, so it is waiting for it (not in the transport) when
        // cancelled; `staying` joins it.
        let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
        let leaving = Task { try await client.send(data) }
        await gate.arrivals(1)
        let staying = Task { try await client.send(data) }
        #expect(
            await server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.filter { if case .answered = $0 { true } else { false } }.count == 2
            })

        leaving.cancel()
        // The refresh is held at the gate until after this, so an answer at all proves the
        // caller did not wait for it; the limit only ends a wait that would never end.
        let left = await result(within: .seconds(10) * TestTiming.scale) {
            await networkError { _ = try await leaving.value }
        }
        gate.open()

        #expect(left??.code == .cancelled, "answered before the refresh ended: \(String(describing: left))")
        #expect(try await staying.value == "new")
        #expect(fetches.increment() == 2, "one refresh")
    }

    /// A backend whose `/v1/data` always answers business code 99.
    static func loggedOutBackend() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("/v1/data") { _ in .json(#"{"code":99,"msg":"not logged in"}"#) }
        return server
    }

    @Test("a failed re-login announces the end of the session once, however many requests saw it")
    func oneExpiryPerSession() async throws {
        let server = try Self.loggedOutBackend()
        defer { server.stop() }
        let events = SessionEvents()
        let stream = events.updates()
        struct Refused: Error {}
        let gate = Gate()
        let client = Self.client(
            server,
            [
                .reLogin(codes: [99], events: events) { _ in
                    await gate.pass()
                    throw Refused()
                }
            ])
        let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
        let requests = (0..<5).map { _ in Task { try await client.send(data) } }
        #expect(
            await server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.filter { if case .answered = $0 { true } else { false } }.count == 5
            })
        gate.open()
        for request in requests {
            let error = await networkError { _ = try await request.value }
            #expect(error?.code == .sessionExpired)
        }
        let seen = await Self.collect(events, stream)
        #expect(seen.filter { $0 == .sessionExpired }.count == 1, "\(seen)")
    }

    @Test("a session that began after an announced end (a login the app made itself) gets its own end")
    func laterSessionIsAnnounced() async throws {
        let server = try Self.loggedOutBackend()
        defer { server.stop() }
        let events = SessionEvents()
        let stream = events.updates()
        struct Refused: Error {}
        let client = Self.client(server, [.reLogin(codes: [99], events: events) { _ in throw Refused() }])
        // The first session ends; the user logs in on the login screen (outside the layer);
        // later that session ends too.
        for _ in 0..<2 {
            let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
            #expect(error?.code == .sessionExpired)
        }
        let seen = await Self.collect(events, stream)
        #expect(seen.filter { $0 == .sessionExpired }.count == 2, "\(seen)")
    }

    /// The events sent so far (buffered in `stream`), read until none comes for 300 ms; for
    /// layers that send every kind of event, where no marker can be told apart.
    static func drain(_ stream: AsyncStream<SessionEvent>) async -> [SessionEvent] {
        await withTaskGroup(of: [SessionEvent]?.self) { group in
            group.addTask {
                var seen: [SessionEvent] = []
                for await event in stream { seen.append(event) }  // ends when cancelled
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(300))
                return nil
            }
            _ = await group.next()
            group.cancelAll()
            return await group.compactMap { $0 }.reduce([], +)
        }
    }

    /// The events sent so far, read up to a marker sent now.
    static func collect(_ events: SessionEvents, _ stream: AsyncStream<SessionEvent>) async -> [SessionEvent] {
        events.send(.reLoginSucceeded)
        var seen: [SessionEvent] = []
        for await event in stream {
            if event == .reLoginSucceeded { break }
            seen.append(event)
        }
        return seen
    }

    @Test("re-logins are rate-limited: past the limit a request fails at once without the handler")
    func reLoginLimit() async throws {
        let server = try Self.loggedOutBackend()
        defer { server.stop() }
        let logins = Counter()
        let events = SessionEvents()
        let stream = events.updates()
        let layer = ReLoginInterceptor(codes: [99], events: events, limit: 2, window: .seconds(60)) { _ in
            _ = logins.increment()
        }
        let client = Self.client(server, [layer])
        for _ in 0..<4 {
            let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
            #expect(error?.code == .sessionExpired)
        }
        #expect(await layer.reLoginCount == 2)
        #expect(logins.increment() == 3, "the handler ran twice")
        // One end per re-login that did not help; the refused ones announce nothing more.
        let seen = await Self.drain(stream)
        #expect(seen.filter { $0 == .sessionExpired }.count == 2, "\(seen)")
    }

    @Test("a caller cancelled while a re-login runs ends at once")
    func cancelDuringReLogin() async throws {
        let server = try Self.loggedOutBackend()
        defer { server.stop() }
        let gate = Gate()
        let client = Self.client(server, [.reLogin(codes: [99]) { _ in await gate.pass() }])
        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)

        request.cancel()
        // The re-login is held at the gate until after this: an answer at all proves the caller
        // did not wait for it.
        let error = await result(within: .seconds(10) * TestTiming.scale) {
            await networkError { _ = try await request.value }
        }
        gate.open()

        #expect(error??.code == .cancelled, "\(String(describing: error))")
    }
}
