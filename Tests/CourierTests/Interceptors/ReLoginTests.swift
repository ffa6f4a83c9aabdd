import Courier
import CourierTesting
import Foundation
import Testing

/// The re-login layer against a backend that answers code 99 until the client logs in again.
@Suite struct ReLoginTests {
    /// The app's session: what the client sends in the `session` header.
    actor Session {
        var value = "none"
        func set(_ value: String) { self.value = value }
    }

    final class Backend99: @unchecked Sendable {
        let server: LoopbackServer
        private let lock = NSLock()
        private var logins = 0

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
                return request.headers["session"] == valid
                    ? .envelope(data: "ok") : .json(#"{"code":99,"msg":"not logged in"}"#)
            }
            server.route("/v1/elsewhere") { _ in .json(#"{"result":500,"code":500,"msg":"logged in elsewhere"}"#) }
        }

        var loginHits: Int { server.requests.filter { $0.path == "/v1/login" }.count }
        /// The status and business code each re-login was told about.
        var heard: [String] { lock.withLock { causes } }
        private var causes: [String] = []

        func client(session: Session, events: SessionEvents, failingLogin: Bool = false) -> (
            NetworkClient, ReLoginInterceptor
        ) {
            let base = server.baseURL.appendingPathComponent("v1/")
            // The login sends through the same client; its handle skips the re-login layer.
            let layer = ReLoginInterceptor(codes: [99, 500], events: events) { [self] login in
                lock.withLock { causes.append("\(login.status) \(login.businessCode.map(String.init) ?? "-")") }
                struct LoginFailed: Error {}
                if failingLogin { throw LoginFailed() }
                await session.set(try await login.client.send(Endpoint<String>.post("login")))
            }
            let client = NetworkClient(
                configuration: .init(
                    baseURL: base,
                    interceptors: [layer, .headers(computed: { _ in ["session": await session.value] })],
                    transport: TestTransport.make()))
            return (client, layer)
        }
    }

    @Test(
        "a re-login under way when the app logs out (cancelAll()) sends no login and no event; a request after the logout logs in on its own at once",
        .timeLimit(.minutes(1)))
    func logoutDuringReLogin() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/data") { request in
            request.headers["session"] == "s1" ? .envelope(data: "ok") : .json(#"{"code":99,"msg":"not logged in"}"#)
        }
        server.route("/v1/login") { _ in .envelope(data: "s1") }
        let session = Session()
        let events = SessionEvents()
        let observed = events.updates()
        let calls = Counter()
        let started = Gate()
        let finished = Gate()
        finished.open()
        let outcome = Log()
        let layer = ReLoginInterceptor(codes: [99], events: events) { login in
            let first = calls.increment() == 1
            if first { await started.pass() }
            do {
                await session.set(try await login.client.send(Endpoint<String>.post("login")))
                outcome.append("logged in")
            } catch {
                outcome.append((error as? NetworkError)?.code.rawValue ?? "\(error)")
            }
            // The first one swallows the refusal, as a careless handler might: it still ends
            // as cancelled, with nothing replayed.
            if first { await finished.pass() }
        }
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"),
                interceptors: [layer, .headers(computed: { _ in ["session": await session.value] })],
                transport: TestTransport.make()))
        let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)

        let before = Task { try await client.send(data) }
        await started.arrivals(1)
        client.cancelAll()
        // The first re-login is still held: this one cannot wait for it.
        let after = try await client.send(data)
        started.open()
        let error = await networkError { _ = try await before.value }
        await finished.arrivals(1)

        #expect(error?.code == .cancelled)
        #expect(after == "ok")
        #expect(outcome.all == ["logged in", "cancelled"], "the first login was refused")
        #expect(server.requests.filter { $0.path == "/v1/login" }.count == 1)
        #expect(
            await SessionRaceTests.drain(observed) == [.reLoginNeeded, .reLoginNeeded, .reLoginSucceeded],
            "the first re-login ended without an event")
        #expect(await layer.reLoginCount == 2)
    }

    @Test("a request that meets code 99 after cancelAll() ran since it began starts no re-login")
    func cancelledRequestStartsNoReLogin() async throws {
        let gate = Gate()
        // A transport that hands the answer back however the request was cancelled meanwhile:
        // the layer sees the 99 after cancelAll().
        let transport = MockTransport { _ in
            await gate.pass()
            return .json(#"{"code":99,"msg":"not logged in"}"#)
        }
        let calls = Counter()
        let layer = ReLoginInterceptor(codes: [99]) { _ in _ = calls.increment() }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/v1/")!, interceptors: [layer], transport: transport))
        let request = Task { try await client.send(Endpoint<String>.get("data")) }
        await gate.arrivals(1)
        client.cancelAll()
        gate.open()
        let error = await networkError { _ = try await request.value }

        #expect(error?.code == .cancelled)
        #expect(calls.current == 0)
        #expect(await layer.reLoginCount == 0)
    }

    @Test("200 concurrent requests meeting code 99 cause one re-login, and each is replayed once")
    func storm() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let events = SessionEvents()
        var observed = events.updates().makeAsyncIterator()
        let (client, layer) = backend.client(session: Session(), events: events)
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
            for _ in 0..<200 { group.addTask { try await client.send(data) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: "ok", count: 200))
        #expect(backend.loginHits == 1)
        #expect(await layer.reLoginCount == 1)
        let dataRequests = backend.server.requests.filter { $0.path == "/v1/data" }
        #expect(dataRequests.count <= 400, "no request is replayed more than once")
        #expect(await observed.next() == .reLoginNeeded)
        #expect(await observed.next() == .reLoginSucceeded)
        print(
            "re-login storm: 200 requests, \(backend.loginHits) re-login, \(dataRequests.count) data requests on the wire"
        )
    }

    @Test("HTTP 401 triggers a re-login when configured, and not otherwise")
    func unauthorized() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/login") { _ in .empty204 }
        server.route("/data") { _ in
            server.requests.contains { $0.path == "/login" } ? .envelope(data: "ok") : .init(status: 401)
        }
        for logsInAgainOnUnauthorized in [false, true] {
            let client = NetworkClient(
                configuration: .init(
                    baseURL: server.baseURL,
                    interceptors: [
                        .reLogin(codes: [], logsInAgainOnUnauthorized: logsInAgainOnUnauthorized) { login in
                            #expect(login.status == 401 && login.businessCode == nil)
                            _ = try await login.client.send(Endpoint<EmptyResponse>.post("login", decoding: .empty))
                        }
                    ], transport: TestTransport.make()))
            let result = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
            #expect(result?.status == (logsInAgainOnUnauthorized ? nil : 401))
        }
        #expect(server.requests.filter { $0.path == "/login" }.count == 1)
    }

    @Test("a replay that still asks for a login throws sessionExpired and tells the app")
    func replayStillFails() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let events = SessionEvents()
        var observed = events.updates().makeAsyncIterator()
        let (client, _) = backend.client(session: Session(), events: events)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("elsewhere")) }
        #expect(error?.code == .sessionExpired)
        #expect(error?.businessCode == 500)
        #expect(backend.server.requests.filter { $0.path == "/v1/elsewhere" }.count == 2)
        #expect(await observed.next() == .reLoginNeeded)
        #expect(await observed.next() == .reLoginSucceeded)
        #expect(await observed.next() == .sessionExpired)
    }

    @Test("a failing re-login handler fails every waiting request with sessionExpired")
    func handlerFails() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, _) = backend.client(session: Session(), events: SessionEvents(), failingLogin: true)
        let codes = await withTaskGroup(of: NetworkError.Code?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await networkError {
                        _ = try await client.send(Endpoint<String>.get("data").sharingIdenticalRequests(false))
                    }?.code
                }
            }
            return await group.reduce(into: [NetworkError.Code?]()) { $0.append($1) }
        }
        #expect(codes == Array(repeating: .sessionExpired, count: 20))
        #expect(backend.server.requests.allSatisfy { $0.path == "/v1/data" }, "no replay after a failed re-login")
        #expect(backend.server.requests.count == 20)
    }

    @Test(
        "a failed re-login's error carries the code that asked for it: 99 or 500",
        arguments: [99, 500] as [BusinessCode])
    func failureCarriesTheCode(code: BusinessCode) async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, _) = backend.client(session: Session(), events: SessionEvents(), failingLogin: true)
        let error = await networkError {
            _ = try await client.send(Endpoint<String>.get(code == 99 ? "data" : "elsewhere"))
        }
        #expect(error?.code == .sessionExpired)
        #expect(error?.businessCode == code)
        #expect(error?.status == 200)
    }

    @Test("the handler is told which code asked for the login: 99 wants a silent re-login, 500 a dialog")
    func handlerToldTheCode() async throws {
        let backend = try Backend99()
        defer { backend.server.stop() }
        let (client, _) = backend.client(session: Session(), events: SessionEvents())
        #expect(try await client.send(Endpoint<String>.get("data")) == "ok")
        _ = await networkError { _ = try await client.send(Endpoint<String>.get("elsewhere")) }
        #expect(backend.heard == ["200 99", "200 500"])
        #expect(backend.loginHits == 2)
    }
}
