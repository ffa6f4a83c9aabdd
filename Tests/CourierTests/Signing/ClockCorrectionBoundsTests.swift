import CourierTesting
import Foundation
import Testing

@testable import Courier

/// What a clock correction may move: only its own server's signing clock, only by a bounded
/// amount, only when the request signed with it was taken, and only within the session it was
/// made in.
@Suite struct ClockCorrectionBoundsTests {
    static let secret = Data("clock-secret".utf8)

    /// A route that takes a timestamp within a minute of `clock` plus `ahead` seconds and refuses
    /// it (code 1001) otherwise, with that time in `Date`; `resent` answers what follows a
    /// refusal, when given.
    static func route(
        _ server: LoopbackServer, _ path: String, clock: ManualClock, ahead: TimeInterval,
        resent: (@Sendable () async -> LoopbackServer.Response)? = nil
    ) {
        let refused = Counter()
        server.route(path, method: .post) { request in
            let now = clock.now.addingTimeInterval(ahead)
            let sent = TimeInterval(request.form["timestamp"] ?? "") ?? 0
            let headers: HTTPHeaders = ["Content-Type": "application/json", "Date": HTTPDate.format(now) ?? ""]
            guard abs(sent - now.timeIntervalSince1970) <= 60 else {
                _ = refused.increment()
                return .init(
                    status: 200, headers: headers, body: Data(#"{"code":1001,"msg":"timestamp expired"}"#.utf8))
            }
            if refused.current > 0, let resent { return await resent() }
            return .init(status: 200, headers: headers, body: Data(#"{"code":0,"data":"placed"}"#.utf8))
        }
    }

    /// A client whose device clock is `clock`, signing with a correction for code 1001.
    static func client(
        _ server: LoopbackServer, clock: ManualClock, session: Session? = nil,
        correction: ClockCorrection = ClockCorrection(codes: [1001])
    ) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL, session: session,
                interceptors: [
                    SigningInterceptor(.hmacSHA256(secret: secret), clockCorrection: correction) { clock.now }
                ],
                transport: TestTransport.make()))
    }

    static func place(_ client: NetworkClient, _ url: String) async throws -> String {
        try await client.send(Endpoint<String>.post(url, body: .form(["item": "tea"])))
    }

    /// The timestamps `server` received, in order.
    static func stamps(_ server: LoopbackServer) -> [TimeInterval] {
        server.requests.compactMap { TimeInterval($0.form["timestamp"] ?? "") }
    }

    @Test("a correction another server's clock made does not move the backend's: each origin keeps its own")
    func perOrigin() async throws {
        let clock = ManualClock()
        let backend = try LoopbackServer()
        let other = try LoopbackServer()
        defer {
            backend.stop()
            other.stop()
        }
        Self.route(backend, "/orders", clock: clock, ahead: 0)
        Self.route(other, "/orders", clock: clock, ahead: 7200)
        let client = Self.client(backend, clock: clock)
        let otherURL = other.baseURL.appendingPathComponent("orders").absoluteString

        #expect(try await Self.place(client, otherURL) == "placed")
        #expect(try await Self.place(client, "orders") == "placed")
        #expect(try await Self.place(client, otherURL) == "placed")

        let now = clock.now.timeIntervalSince1970
        #expect(Self.stamps(other) == [now, now + 7200, now + 7200], "refused, corrected, then right at once")
        #expect(Self.stamps(backend) == [now], "the backend's clock was never moved")
    }

    @Test("a server time further off than the bound is not believed: the refusal is returned, nothing sent again")
    func bounded() async throws {
        let clock = ManualClock()
        let server = try LoopbackServer()
        defer { server.stop() }
        Self.route(server, "/orders", clock: clock, ahead: 300 * 86_400)
        Self.route(server, "/near", clock: clock, ahead: 3 * 3600)
        let client = Self.client(
            server, clock: clock, correction: ClockCorrection(codes: [1001], maximumCorrection: .seconds(2 * 3600)))

        let far = await networkError { _ = try await Self.place(client, "orders") }
        let near = await networkError { _ = try await Self.place(client, "near") }

        #expect(far?.businessCode == 1001 && near?.businessCode == 1001)
        #expect(server.requests.count == 2, "neither was sent again")
    }

    @Test("a correction whose request is answered with an error status is not kept")
    func notKeptAfterServerError() async throws {
        let clock = ManualClock()
        let server = try LoopbackServer()
        defer { server.stop() }
        Self.route(server, "/orders", clock: clock, ahead: 3600) { .json(#"{"error":"busy"}"#, status: 503) }
        let client = Self.client(server, clock: clock)

        for _ in 0..<2 {
            let error = await networkError { _ = try await Self.place(client, "orders") }
            #expect(error?.code == .httpStatus && error?.status == 503)
        }

        let now = clock.now.timeIntervalSince1970
        #expect(Self.stamps(server) == [now, now + 3600, now, now + 3600], "each call starts from the device clock")
    }

    @Test("a correction that arrives after a logout is not adopted")
    func notAdoptedAcrossLogout() async throws {
        let clock = ManualClock()
        let gate = Gate()
        let accepted = Counter()
        // A transport that hands its answer back however the request was cancelled meanwhile:
        // the server took the corrected request, and the answer arrives after the logout.
        let transport = MockTransport { request in
            let now = clock.now.addingTimeInterval(3600)
            let sent = TimeInterval(request.query["timestamp"] ?? "") ?? 0
            guard abs(sent - now.timeIntervalSince1970) <= 60 else {
                return .json(#"{"code":1001,"msg":"timestamp expired"}"#, headers: ["Date": HTTPDate.format(now) ?? ""])
            }
            if accepted.increment() == 1 { await gate.pass() }
            return try .envelope(data: "placed")
        }
        let session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "ann")))
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session,
                interceptors: [
                    SigningInterceptor(
                        .hmacSHA256(secret: Self.secret), clockCorrection: ClockCorrection(codes: [1001])
                    ) {
                        clock.now
                    }
                ],
                transport: transport))
        let orders = Endpoint<String>.get("orders")

        let request = Task { try await client.send(orders) }
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()
        let error = await networkError { _ = try await request.value }
        let next = try await client.send(orders)

        let now = clock.now.timeIntervalSince1970
        let stamps = transport.requests.compactMap { TimeInterval($0.query["timestamp"] ?? "") }
        #expect(error?.code == .cancelled)
        #expect(next == "placed")
        #expect(stamps == [now, now + 3600, now, now + 3600], "the next session starts from the device clock")
    }
}
