import CourierTesting
import Foundation
import Testing

@testable import Courier

/// An answer's body is read once by the client: for the view its layers and checks share, and
/// for the endpoint's envelope, which a layer asking for the code has decoded ahead.
/// Serialized: the tests count decodes of one payload type.
@Suite(.serialized) struct BodyReadingTests {
    typealias CountingDecoder = EnvelopeViewTests.CountingDecoder

    /// A payload that counts how many times it is decoded.
    struct Counted: Decodable, Sendable {
        static let decodes = Locked(0)
        let id: Int
        init(from decoder: any Decoder) throws {
            Self.decodes.withLock { $0 += 1 }
            id = try decoder.container(keyedBy: EnvelopeKey.self).decode(Int.self, forKey: EnvelopeKey("id"))
        }
    }

    static func context(_ decoder: JSONDecoder) -> DecodingContext {
        DecodingContext(decoder: decoder, envelope: decoder.userInfo[.envelopeFormat] as? EnvelopeFormat ?? .standard)
    }

    @Test("an answer's body is read once, however many ask; its copies share the reading")
    func readOnce() {
        let decoder = EnvelopeViewTests.decoder()
        let response = HTTPResponse.json(#"{"code":99,"msg":"log in"}"#)
        let copy = response
        #expect(response.envelope(decoder).failureCode == 99)
        #expect(copy.envelope(decoder).message == "log in")
        #expect(response.envelopeIfRead(decoder)?.code == 99)
        #expect(decoder.reads.withLock { $0 } == 1)
    }

    @Test("a changed body is read again, and its copy keeps the first body's reading")
    func changedBody() {
        let decoder = EnvelopeViewTests.decoder()
        var response = HTTPResponse.json(#"{"code":99}"#)
        let before = response
        #expect(response.envelope(decoder).code == 99)
        response.body = Data(#"{"code":7}"#.utf8)
        #expect(response.envelopeIfRead(decoder) == nil)
        #expect(response.envelope(decoder).code == 7)
        #expect(before.envelope(decoder).code == 99)
        #expect(decoder.reads.withLock { $0 } == 2)
    }

    @Test("another decoder reads the body for itself")
    func otherDecoder() {
        let first = EnvelopeViewTests.decoder()
        let second = EnvelopeViewTests.decoder(EnvelopeFormat(codeKey: "result"))
        let response = HTTPResponse.json(#"{"code":99,"result":5}"#)
        #expect(response.envelope(first).code == 99)
        #expect(response.envelope(second).code == 5)
        #expect(first.reads.withLock { $0 } == 1)
        #expect(second.reads.withLock { $0 } == 1)
    }

    @Test("a layer's code and the endpoint's decoding read the body once between them")
    func aheadThenDecoded() throws {
        let decoder = EnvelopeViewTests.decoder()
        let response = HTTPResponse.json(#"{"code":0,"msg":"ok","data":[1,2]}"#)
        let decoding = ResponseDecoding<[Int]>.envelope
        try #require(decoding.decodeAhead != nil)
        decoding.decodeAhead?(response, decoder)
        #expect(response.envelope(decoder).failureCode == 0)
        #expect(response.envelope(decoder).message == "ok")
        #expect(try decoding.decode(response, Self.context(decoder)) == [1, 2])
        #expect(decoder.reads.withLock { $0 } == 1)
        // The decoding took the envelope: another caller of the same answer decodes its own.
        #expect(try decoding.decode(response, Self.context(decoder)) == [1, 2])
        #expect(decoder.reads.withLock { $0 } == 2)
    }

    @Test("an envelope decoded ahead that fails fails the decoding the same way; its code is still read")
    func aheadFailed() throws {
        let decoder = EnvelopeViewTests.decoder()
        let response = HTTPResponse.json(#"{"code":0,"msg":"ok","data":"not a list"}"#)
        let decoding = ResponseDecoding<[Int]>.envelope
        decoding.decodeAhead?(response, decoder)
        #expect(response.envelope(decoder).failureCode == 0)
        let error = #expect(throws: NetworkError.self) { try decoding.decode(response, Self.context(decoder)) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.codingPath == "data")
        // The view was read in the same pass as the envelope that failed.
        #expect(decoder.reads.withLock { $0 } == 1)
    }

    @Test("an envelope decoded ahead as another type is left to that type's decoding")
    func aheadOtherType() throws {
        let decoder = EnvelopeViewTests.decoder()
        let response = HTTPResponse.json(#"{"code":0,"data":[1,2]}"#)
        ResponseDecoding<[Int]>.envelope.decodeAhead?(response, decoder)
        #expect(try ResponseDecoding<[Double]>.envelope.decode(response, Self.context(decoder)) == [1, 2])
        #expect(try ResponseDecoding<[Int]>.envelope.decode(response, Self.context(decoder)) == [1, 2])
        #expect(decoder.reads.withLock { $0 } == 2)
    }

    @Test("the clock's number and an error body's fields come from the same pass as the envelope")
    func sameView() {
        let decoder = EnvelopeViewTests.decoder(numbersAt: ["serverTime"])
        let response = HTTPResponse.json(
            #"{"code":1001,"msg":"late","serverTime":1700000000,"errorDescription":"old","data":null}"#)
        ResponseDecoding<[Int]>.envelope.decodeAhead?(response, decoder)
        #expect(response.envelope(decoder).failureCode == 1001)
        #expect(response.envelope(decoder).number(at: "serverTime") == 1_700_000_000)
        #expect(response.envelope(decoder).errorFields?.errorDescription == "old")
        #expect(decoder.reads.withLock { $0 } == 1)
    }

    @Test("an endpoint's own decoder reads for itself and leaves the answer's reading to the client")
    func ownDecoder() throws {
        let response = HTTPResponse.json(#"{"code":0,"data":[1]}"#)
        let decoding = ResponseDecoding<[Int]>.envelope(using: JSONDecoder())
        #expect(decoding.decodeAhead == nil)
        #expect(try decoding.decode(response, Self.context(EnvelopeViewTests.decoder())) == [1])
        #expect(response.bodyReading.withLock { $0 == nil })
    }

    @Test("through a client with re-login codes, the payload is decoded once and the layer's code came with it")
    func throughClient() async throws {
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in .json(#"{"code":0,"msg":"ok","data":{"id":7}}"#) })
        configuration.session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t")), logInCodes: [99],
            logIn: { _ in Credential(accessToken: "t") })
        let client = NetworkClient(configuration: configuration)
        let before = Counted.decodes.withLock { $0 }
        let reply = try await client.reply(to: Endpoint<Counted>.get("one"))
        #expect(reply.value.id == 7)
        #expect(Counted.decodes.withLock { $0 } - before == 1)
        #expect(reply.message == "ok")
    }

    /// A client whose session reads codes (re-login on 99), answering `body` with `status` once
    /// `gate` opens.
    static func client(
        status: Int = 200, contentType: String = "application/json", body: Data, gate: Gate? = nil,
        userID: String? = nil
    ) -> NetworkClient {
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in
                await gate?.pass()
                return HTTPResponse(status: status, headers: ["Content-Type": contentType], body: body)
            })
        configuration.session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t", userID: userID)), logInCodes: [99],
            logIn: { _ in Credential(accessToken: "t") })
        return NetworkClient(configuration: configuration)
    }

    @Test("an answer the client will refuse (its status, its media type) is not decoded ahead")
    func refusedNotAhead() async throws {
        let body = Data(#"{"code":0,"msg":"ok","data":{"id":7}}"#.utf8)
        for (status, type) in [(503, "application/json"), (200, "image/png")] {
            let client = Self.client(status: status, contentType: type, body: body)
            let before = Counted.decodes.withLock { $0 }
            let error = await #expect(throws: NetworkError.self) { try await client.send(Endpoint<Counted>.get("one")) }
            #expect(error?.code == (status == 503 ? .httpStatus : .unacceptableContentType))
            #expect(Counted.decodes.withLock { $0 } == before, "status \(status), \(type)")
        }
    }

    @Test("an envelope over 8 MB is neither decoded ahead nor read for its code, whatever its decoding says")
    func largeNotAhead() async throws {
        let padding = String(repeating: "a", count: EnvelopeView.largestBody)
        let body = Data(#"{"code":0,"msg":"ok","data":{"id":7,"pad":"\#(padding)"}}"#.utf8)
        let reply = try await Self.client(body: body).reply(to: Endpoint<Counted>.get("one"))
        #expect(reply.value.id == 7)
        #expect(reply.code == nil)
        #expect(reply.message == nil)
    }

    @Test("a shared answer keeps no envelope decoded ahead for a caller that left before decoding it")
    func sharedLeft() async throws {
        let gate = Gate()
        let client = Self.client(body: Data(#"{"code":0,"data":{"id":7}}"#.utf8), gate: gate, userID: "ann")
        let before = Counted.decodes.withLock { $0 }
        let left = Task { try await client.send(Endpoint<Counted>.get("me")) }
        await gate.arrivals(1)
        let staying = Task { try await client.reply(to: Endpoint<HTTPResponse>.get("me", decoding: .response)) }
        let deadline = ContinuousClock.now + .seconds(30)
        while client.sharedTransferWaiters < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(client.sharedTransferWaiters == 2, "the second caller joined the transfer")
        left.cancel()
        while client.sharedTransferWaiters > 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        gate.open()
        let reply = try await staying.value
        #expect(reply.value.status == 200)
        #expect(reply.response.bodyReading.withLock { $0?.ahead == nil })
        #expect(Counted.decodes.withLock { $0 } - before == 1, "the session's layer had it decoded ahead")
        #expect(await left.result.isFailure)
    }

    /// A layer that logs the session out once its answer is in: a logout at that `await`.
    struct LoggingOut: Interceptor {
        let session: Session
        var layer: InterceptorLayer { "loggingOut" }
        func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
            -> HTTPResponse
        {
            let response = try await next(request)
            try await session.logOut()
            return response
        }
    }

    @Test("an answer that arrives after a logout is not decoded ahead, nor given")
    func loggedOutNotAhead() async throws {
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "t", userID: "ann")), logInCodes: [99],
            logIn: { _ in Credential(accessToken: "t") })
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in .json(#"{"code":0,"data":{"id":7}}"#) })
        configuration.session = session
        configuration.interceptors = [LoggingOut(session: session)]
        let client = NetworkClient(configuration: configuration)
        let before = Counted.decodes.withLock { $0 }
        let error = await #expect(throws: NetworkError.self) {
            try await client.send(Endpoint<Counted>.get("me").sharingIdenticalRequests(false))
        }
        #expect(error?.code == .cancelled || error?.code == .sessionExpired)
        #expect(Counted.decodes.withLock { $0 } == before)
    }
}

extension Result {
    /// Whether it is a failure.
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
