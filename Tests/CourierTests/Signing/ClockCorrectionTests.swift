import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Signing with an algorithm of the app's own, and a device clock that is wrong, over real HTTP.
@Suite struct ClockCorrectionTests {
    static let secret = Data("clock-secret".utf8)

    /// The server's time as the `Date` header writes it.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// A backend that refuses (code 1001) a timestamp more than a minute from its clock, and
    /// tells its time in the `Date` header and in `serverTime` (milliseconds). Both clocks are
    /// `clock`, the device's `deviceClockOff` from it, so no time passes between the signing
    /// and the check however slow the machine.
    /// With `wrapped`, the signing layer is inside a layer of the app's own.
    static func backend(
        clock: ManualClock, clockCorrection: ClockCorrection?, deviceClockOff: TimeInterval, wrapped: Bool = false
    ) throws
        -> (server: LoopbackServer, client: NetworkClient)
    {
        let server = try LoopbackServer()
        let layer = SigningInterceptor(
            .hmacSHA256(secret: Self.secret), clockCorrection: clockCorrection,
            now: { clock.now.addingTimeInterval(deviceClockOff) })
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"),
                interceptors: [wrapped ? Wrapping(inner: layer) : layer],
                transport: TestTransport.make()))
        server.route("/v1/orders", method: .post) { request in
            let now = clock.now
            let sent = TimeInterval(request.form["timestamp"] ?? "") ?? 0
            let headers: HTTPHeaders = ["Content-Type": "application/json", "Date": Self.httpDate(now)]
            guard abs(sent - now.timeIntervalSince1970) <= 60 else {
                let body =
                    #"{"code":1001,"msg":"timestamp expired","serverTime":\#(Int(now.timeIntervalSince1970 * 1000))}"#
                return .init(status: 200, headers: headers, body: Data(body.utf8))
            }
            return .init(status: 200, headers: headers, body: Data(#"{"code":0,"data":"placed"}"#.utf8))
        }
        return (server, client)
    }

    static func place(_ client: NetworkClient) async throws -> String {
        try await client.send(Endpoint<String>.post("orders", body: .form(["item": "tea"])))
    }

    @Test(
        "a device clock an hour off: the refused request is signed again with the server's time, once; later ones at once",
        arguments: [ClockCorrection.ServerTime.dateHeader, .field("serverTime")])
    func wrongClockCorrected(serverTime: ClockCorrection.ServerTime) async throws {
        let clock = ManualClock()
        let backend = try Self.backend(
            clock: clock, clockCorrection: ClockCorrection(codes: [1001], serverTime: serverTime),
            deviceClockOff: -3600)
        defer { backend.server.stop() }
        #expect(try await Self.place(backend.client) == "placed")
        let requests = backend.server.requests
        #expect(requests.count == 2, "refused, then signed again")
        let stamps = requests.compactMap { TimeInterval($0.form["timestamp"] ?? "") }
        let serverNow = clock.now.timeIntervalSince1970
        #expect(stamps == [serverNow - 3600, serverNow], "signed with the device's time, then the server's")
        #expect(requests[0].form["nonce"] != requests[1].form["nonce"], "a fresh nonce")
        #expect(requests[0].form["sign"] != requests[1].form["sign"])
        #expect(try await Self.place(backend.client) == "placed")
        #expect(backend.server.requests.count == 3, "the next one is right the first time")
        let next = backend.server.requests.last.flatMap { TimeInterval($0.form["timestamp"] ?? "") }
        #expect(next == serverNow, "signed with the server's time at once")
    }

    /// A layer of the app's own that hands each request to another layer.
    struct Wrapping: Interceptor {
        let inner: any Interceptor
        var layer: InterceptorLayer { "wrapping" }
        func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> HTTPResponse
        {
            try await inner.intercept(request, context: context, next: next)
        }
    }

    @Test("a signing layer inside a layer of the app's own still reads the server's time from the body")
    func wrappedFieldCorrected() async throws {
        let clock = ManualClock()
        let backend = try Self.backend(
            clock: clock, clockCorrection: ClockCorrection(codes: [1001], serverTime: .field("serverTime")),
            deviceClockOff: -3600, wrapped: true)
        defer { backend.server.stop() }
        #expect(try await Self.place(backend.client) == "placed")
        #expect(backend.server.requests.count == 2, "refused, then signed again")
    }

    @Test("without a correction, or with the refusal's code not named, the refusal is the caller's")
    func noCorrection() async throws {
        for correction in [nil, ClockCorrection(codes: [7])] {
            let backend = try Self.backend(clock: ManualClock(), clockCorrection: correction, deviceClockOff: -3600)
            defer { backend.server.stop() }
            let error = await networkError { _ = try await Self.place(backend.client) }
            #expect(error?.code == .business && error?.businessCode == 1001)
            #expect(backend.server.requests.count == 1)
        }
    }

    /// A backend that refuses every timestamp (code 1001), with its time in `Date`. Both clocks
    /// are `clock`, the device's `deviceClockOff` from it; an answer takes `slowness` seconds of
    /// it to arrive.
    static func refusingBackend(clock: ManualClock, deviceClockOff: TimeInterval, slowness: TimeInterval = 0) throws
        -> (server: LoopbackServer, client: NetworkClient)
    {
        let server = try LoopbackServer()
        server.route("/v1/orders", method: .post) { _ in
            let date = HTTPDate.format(clock.now) ?? ""
            clock.advance(slowness)
            return .init(
                status: 200, headers: ["Content-Type": "application/json", "Date": date],
                body: Data(#"{"code":1001,"msg":"timestamp expired"}"#.utf8))
        }
        let layer = SigningInterceptor(
            .hmacSHA256(secret: Self.secret), clockCorrection: ClockCorrection(codes: [1001]),
            now: { clock.now.addingTimeInterval(deviceClockOff) })
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), interceptors: [layer],
                transport: TestTransport.make()))
        return (server, client)
    }

    @Test(
        "a refusal from a server whose clock agrees with the device's is returned, however slow the answer: nothing is sent again",
        arguments: [0, 1, 30])
    func clocksAgree(slowness: TimeInterval) async throws {
        let backend = try Self.refusingBackend(clock: ManualClock(), deviceClockOff: 0, slowness: slowness)
        defer { backend.server.stop() }
        let error = await networkError { _ = try await Self.place(backend.client) }
        #expect(error?.businessCode == 1001)
        #expect(backend.server.requests.count == 1)
    }

    @Test(
        "a server that refuses the corrected request too gets it twice, and the correction is not kept",
        arguments: [-3600, 3600])
    func correctionRefusedToo(deviceClockOff: TimeInterval) async throws {
        let clock = ManualClock()
        let backend = try Self.refusingBackend(clock: clock, deviceClockOff: deviceClockOff)
        defer { backend.server.stop() }
        for round in 1...2 {
            let error = await networkError { _ = try await Self.place(backend.client) }
            #expect(error?.businessCode == 1001)
            #expect(backend.server.requests.count == 2 * round)
        }
        let stamps = backend.server.requests.compactMap { TimeInterval($0.form["timestamp"] ?? "") }
        let device = clock.now.timeIntervalSince1970 + deviceClockOff
        #expect(stamps == [device, device - deviceClockOff, device, device - deviceClockOff])
    }

    @Test("HTTP dates in their three forms: exact values, impossible days and other forms refused")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT") == Date(timeIntervalSince1970: 1_709_251_199))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Wed, 31 Dec 2025 23:59:60 GMT") == Date(timeIntervalSince1970: 1_767_225_600))
        // The two obsolete forms a recipient must read too.
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thursday, 29-Feb-24 23:59:59 GMT") == Date(timeIntervalSince1970: 1_709_251_199))
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu Feb 29 23:59:59 2024") == Date(timeIntervalSince1970: 1_709_251_199))
        // After 2038 (in 64 bits whatever Int is), up to the last second of 9999.
        #expect(HTTPDate.parse("Tue, 19 Jan 2038 03:14:08 GMT") == Date(timeIntervalSince1970: 2_147_483_648))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == Date(timeIntervalSince1970: 253_402_300_799))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT") == nil, "the leap second would be year 10000")
        // A two-digit year more than 50 years ahead is the century before.
        let in2026 = Date(timeIntervalSince1970: 1_780_000_000)
        #expect(
            HTTPDate.parse("Monday, 01-Jan-76 00:00:00 GMT", now: in2026) == HTTPDate.parse("Thu Jan  1 00:00:00 2076"))
        #expect(
            HTTPDate.parse("Monday, 01-Jan-77 00:00:00 GMT", now: in2026) == HTTPDate.parse("Sat Jan  1 00:00:00 1977"))
        for text in [
            "Mon, 29 Feb 2100 00:00:00 GMT", "Thu, 31 Apr 2026 00:00:00 GMT", "Sat, 31 Feb 2026 00:00:00 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1969 08:49:37 GMT",
            "Sun,  06 Nov 1994 08:49:37 GMT", "Sunny, 06 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "",
            "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 31-Jun-94 08:49:37 GMT",
            "Sunday,  06-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 1994", "Sun Nov   6 08:49:37 1994",
            "Sun Nov 06 08:49:37 94", "Sun, Nov  6 08:49:37 1994", "Sun Nov  6 08:49:37 1994 GMT",
            "Sun Nov  0 08:49:37 1994",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text.debugDescription)")
        }
    }

    @Test("HTTP dates are written in the preferred form, and read back the same")
    func writtenDates() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777.9)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 253_402_300_799)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1)) == nil)
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(
                timeIntervalSince1970: TimeInterval(Int64.random(in: 0..<253_402_300_800, using: &generator)))
            #expect(HTTPDate.format(date).flatMap { HTTPDate.parse($0) } == date)
        }
    }

    @Test(
        "a server time that cannot be read, or is years away, is not used",
        arguments: [
            ("yesterday", "\"soon\""), ("Sun, 06 Nov 1994 08:49:37 GMT", "1e300"),
            ("Mon, 32 Jan 2026 00:00:00 GMT", "-5"),
            ("", "true"),
        ])
    func unreadableServerTime(date: String, field: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders", method: .post) { _ in
            .init(
                status: 200, headers: ["Content-Type": "application/json", "Date": date],
                body: Data(#"{"code":1001,"serverTime":\#(field)}"#.utf8))
        }
        for serverTime in [ClockCorrection.ServerTime.dateHeader, .field("serverTime")] {
            let client = NetworkClient(
                configuration: .init(
                    baseURL: backend.server.baseURL.appendingPathComponent("v1/"),
                    interceptors: [
                        .signing(
                            .hmacSHA256(secret: Self.secret),
                            clockCorrection: ClockCorrection(codes: [1001], serverTime: serverTime))
                    ],
                    transport: TestTransport.make()))
            let before = backend.server.requests.count
            let error = await networkError { _ = try await Self.place(client) }
            #expect(error?.businessCode == 1001)
            #expect(backend.server.requests.count == before + 1, "not sent again")
        }
    }

    @Test("an algorithm of the app's own gets the canonical request; one that fails sends nothing")
    func customAlgorithm() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders", method: .post) { request in .envelope(data: request.headers["X-Sig"] ?? "") }
        struct KeyUnavailable: Error {}
        let upper = SigningInterceptor.Algorithm { canonical in "SIG:" + canonical.method + ":" + canonical.path }
        let failing = SigningInterceptor.Algorithm { _ in throw KeyUnavailable() }
        func client(_ algorithm: SigningInterceptor.Algorithm) -> NetworkClient {
            NetworkClient(
                configuration: .init(
                    baseURL: backend.server.baseURL.appendingPathComponent("v1/"),
                    interceptors: [
                        .signing(algorithm, placement: .headers(signature: "X-Sig", timestamp: "X-T", nonce: "X-N"))
                    ],
                    transport: TestTransport.make()))
        }
        #expect(try await Self.place(client(upper)) == "SIG:POST:/v1/orders")
        let error = await networkError { _ = try await Self.place(client(failing)) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.underlying is KeyUnavailable)
        #expect(backend.server.requests.count == 1)
    }
}
