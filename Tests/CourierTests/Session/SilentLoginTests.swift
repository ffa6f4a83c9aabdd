import Courier
import CourierTesting
import Foundation
import Testing

/// The session's silent login against a backend that answers code 99 until the client logs in
/// again, and the end of a session the backend refuses.
@Suite struct SilentLoginTests {
    /// A backend whose `/v1/login` issues `s1`, `s2`, …; `/v1/data` takes only the newest, and
    /// answers 99 otherwise; `/v1/stubborn` always answers 99, `/v1/elsewhere` 500.
    final class Backend99: @unchecked Sendable {
        let server: LoopbackServer
        private let lock = NSLock()
        private var logins = 0
        private var causes: [String] = []

        init() throws {
            server = try LoopbackServer()
            server.route("/v1/login") { [self] _ in
                let number = lock.withLock {
                    logins += 1
                    return logins
                }
                try await Task.sleep(for: .milliseconds(50))
                return .envelope(data: "s\(number)")
            }
            server.route("/v1/data") { [self] request in
                let valid = lock.withLock { "s\(logins)" }
                return request.headers["token"] == valid
                    ? .envelope(data: "ok") : .json(#"{"code":99,"msg":"not logged in"}"#)
            }
            server.route("/v1/stubborn") { _ in .json(#"{"code":99,"msg":"not logged in"}"#) }
            server.route("/v1/elsewhere") { _ in .json(#"{"code":500,"msg":"logged in elsewhere"}"#) }
        }

        var loginHits: Int { server.requests.filter { $0.path == "/v1/login" }.count }
        /// The status and business code each login was told about.
        var heard: [String] { lock.withLock { causes } }

        /// A client whose session holds a stale token and logs in again at `/v1/login` (or
        /// fails to, with `failure`, after `failingAfter`).
        func client(
            _ limits: Session.Limits = .init(), failure: (any Error)? = nil, failingAfter: Duration = .zero
        ) -> (NetworkClient, Session) {
            let session = Session(
                store: InMemoryTokenStore(credential: Credential(accessToken: "stale", userID: "ann")),
                logInCodes: [99], askUserCodes: [500], limits: limits,
                logIn: { [self] login in
                    lock.withLock { causes.append("\(login.status) \(login.businessCode.map(String.init) ?? "-")") }
                    if let failure {
                        try await Task.sleep(for: failingAfter)
                        throw failure
                    }
                    return Credential(accessToken: try await login.client.send(Endpoint<String>.post("login")))
                })
            let client = NetworkClient(
                configuration: .init(
                    baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                    transport: TestTransport.make()))
            return (client, session)
        }
    }

    struct LoginRefused: Error {}

    @Test("200 concurrent requests meeting code 99 cause one login, and each is sent again once")
    func storm() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, session) = backend.client()
        let events = session.events()
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
            for _ in 0..<200 { group.addTask { try await client.send(data) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: "ok", count: 200))
        #expect(backend.loginHits == 1)
        let dataRequests = backend.server.requests.filter { $0.path == "/v1/data" }
        #expect(dataRequests.count <= 400, "no request is sent again more than once")
        #expect(await Self.events(events, until: .reLoginSucceeded) == [.reLoginNeeded, .reLoginSucceeded])
        #expect(try await session.credential()?.userID == "ann", "the login keeps the user")
        print("silent login storm: 200 requests, \(backend.loginHits) login, \(dataRequests.count) data requests")
    }

    @Test("a request that still meets a log-in code after the login ends the session, and tells the app")
    func replayStillFails() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, session) = backend.client()
        let events = session.events()
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("stubborn")) }
        #expect(error?.code == .sessionExpired)
        #expect(error?.businessCode == 99)
        #expect(backend.server.requests.filter { $0.path == "/v1/stubborn" }.count == 2)
        #expect(
            await Self.events(events, until: .sessionExpired) == [.reLoginNeeded, .reLoginSucceeded, .sessionExpired])
        #expect(try await session.credential() == nil, "nobody is signed in any more")
    }

    @Test("an ask-the-user code ends the session at once, without a login")
    func askUser() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, session) = backend.client()
        let events = session.events()
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("elsewhere")) }
        #expect(error?.code == .sessionExpired)
        #expect(error?.businessCode == 500 && error?.status == 200)
        #expect(backend.loginHits == 0 && backend.heard.isEmpty)
        #expect(await Self.events(events, until: .sessionExpired) == [.sessionExpired])
        #expect(try await session.credential() == nil)
        #expect(backend.server.requests.count == 1)
    }

    @Test("a failing login fails every waiting request with sessionExpired, and ends the session once")
    func loginFails() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        // The login fails only once all 20 requests have begun (a task of the group that began
        // after the session ended would rightly be sent signed out, and meet a plain 99).
        let (client, session) = backend.client(
            failure: LoginRefused(), failingAfter: .milliseconds(300) * TestTiming.scale)
        let events = session.events()
        let errors = await withTaskGroup(of: NetworkError?.self) { group in
            for n in 0..<20 {
                group.addTask {
                    await networkError {
                        _ = try await client.send(
                            Endpoint<String>.get("data", query: ["n": "\(n)"]).sharingIdenticalRequests(false))
                    }
                }
            }
            return await group.reduce(into: [NetworkError?]()) { $0.append($1) }
        }
        #expect(errors.map { $0?.code } == Array(repeating: .sessionExpired, count: 20))
        #expect(errors.allSatisfy { $0?.businessCode == 99 && $0?.status == 200 }, "the answer that asked for it")
        #expect(backend.server.requests.allSatisfy { $0.path == "/v1/data" })
        // Those not sent yet when the session ended are not sent at all, and none is sent twice.
        let sent = backend.server.requests.compactMap { $0.query["n"] }
        #expect(Set(sent).count == sent.count, "nothing sent again: \(sent.sorted())")
        #expect(backend.heard == ["200 99"], "one login")
        let seen = await Self.events(events, until: .sessionExpired)
        #expect(seen == [.reLoginNeeded, .sessionExpired])
    }

    @Test("a login that cannot reach the server fails its requests, and the session goes on")
    func loginUnreachable() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, session) = backend.client(failure: NetworkError(.transport, "Connection refused."))
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .transport)
        #expect(try await session.credential()?.accessToken == "stale", "still signed in")
    }

    @Test("HTTP 401 without a refresh logs in again; without a login either, it ends the session")
    func unauthorized() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/login") { _ in .envelope(data: "fresh") }
        server.route("/data") { request in
            request.headers["token"] == "fresh" ? .envelope(data: "ok") : .init(status: 401)
        }
        func client(_ session: Session) -> NetworkClient {
            NetworkClient(
                configuration: .init(baseURL: server.baseURL, session: session, transport: TestTransport.make()))
        }
        let stale = InMemoryTokenStore(credential: Credential(accessToken: "stale"))
        let withLogin = Session(
            store: stale,
            logIn: { login in
                #expect(login.status == 401 && login.businessCode == nil && login.previous.accessToken == "stale")
                return Credential(accessToken: try await login.client.send(Endpoint<String>.post("login")))
            })
        #expect(try await client(withLogin).send(Endpoint<String>.get("data")) == "ok")

        let withNothing = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "stale")))
        let error = await networkError { _ = try await client(withNothing).send(Endpoint<String>.get("data")) }
        #expect(error?.code == .sessionExpired && error?.status == 401)
        #expect(try await withNothing.credential() == nil)
    }

    @Test("the login is told which answer asked for it, and the credential it replaces")
    func loginToldTheCause() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, _) = backend.client()
        #expect(try await client.send(Endpoint<String>.get("data")) == "ok")
        #expect(backend.heard == ["200 99"])
    }

    @Test("silent logins are rate-limited: past the limit the session ends without running the login")
    func loginLimit() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, session) = backend.client(.init(logIns: 2))
        for round in 1...3 {
            // The user logs in again on the login screen each time the session ends.
            if round > 1 { try await session.logIn(Credential(accessToken: "stale")) }
            let error = await networkError { _ = try await client.send(Endpoint<String>.get("stubborn")) }
            #expect(error?.code == .sessionExpired)
        }
        #expect(backend.heard.count == 2, "the login ran twice")
        #expect(backend.loginHits == 2)
    }

    @Test("a caller cancelled while a login runs ends at once")
    func cancelDuringLogin() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/data") { _ in .json(#"{"code":99,"msg":"not logged in"}"#) }
        let gate = Gate()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "stale")), logInCodes: [99],
            logIn: { _ in
                await gate.pass()
                return Credential(accessToken: "s1")
            })
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                transport: TestTransport.make()))
        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)

        request.cancel()
        // The login is held at the gate until after this: an answer at all proves the caller did
        // not wait for it.
        let error = await result(within: .seconds(10) * TestTiming.scale) {
            await networkError { _ = try await request.value }
        }
        gate.open()

        #expect(error??.code == .cancelled, "\(String(describing: error))")
    }

    /// The events from `stream` up to and including `last`; none when `last` does not come
    /// (the limit only ends a wait for an event that was never sent).
    static func events(_ stream: AsyncStream<SessionEvent>, until last: SessionEvent) async -> [SessionEvent] {
        await result(within: .seconds(30) * TestTiming.scale) {
            var seen: [SessionEvent] = []
            for await event in stream {
                seen.append(event)
                if event == last { break }
            }
            return seen
        } ?? []
    }
}
