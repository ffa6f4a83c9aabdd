import Courier
import CourierTesting
import Foundation
import Testing

/// Envelope variants, decoded by a client whose transport answers with a fixed body.
@Suite struct EnvelopeTests {
    struct User: Codable, Sendable, Equatable {
        let id: Int
        let name: String
    }

    private func client(answering body: String, format: EnvelopeFormat = .standard, status: Int = 200)
        -> NetworkClient
    {
        let transport = MockTransport { _ in .json(body, status: status) }
        return NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: format, transport: transport))
    }

    struct Variant: Sendable, CustomTestStringConvertible {
        let name: String
        let format: EnvelopeFormat
        let body: String
        var testDescription: String { name }
    }

    static let successes: [Variant] = [
        .init(name: "code/msg/data", format: .standard, body: #"{"code":0,"msg":"ok","data":{"id":7,"name":"Ann"}}"#),
        .init(
            name: "string code", format: .standard, body: #"{"code":"0","msg":"ok","data":{"id":7,"name":"Ann"}}"#),
        .init(
            name: "result/message, success 1",
            format: EnvelopeFormat(codeKey: "result", messageKey: "message", successCodes: [1]),
            body: #"{"result":1,"message":"done","data":{"id":7,"name":"Ann"}}"#),
        .init(
            name: "status, success 200", format: EnvelopeFormat(codeKey: "status", successCodes: [200]),
            body: #"{"status":"200","data":{"id":7,"name":"Ann"}}"#),
        .init(
            name: "custom keys", format: EnvelopeFormat(codeKey: "errno", messageKey: "errmsg", dataKey: "payload"),
            body: #"{"errno":0,"errmsg":"","payload":{"id":7,"name":"Ann"}}"#),
        .init(
            name: "extra unknown fields", format: .standard,
            body:
                #"{"trace":"abc","code":0,"msg":"ok","ts":1700000000,"data":{"id":7,"name":"Ann","extra":[1,2]},"more":{"x":null}}"#
        ),
        .init(
            name: "several success codes", format: EnvelopeFormat(successCodes: [0, 200]),
            body: #"{"code":200,"data":{"id":7,"name":"Ann"}}"#),
    ]

    @Test("the payload of a successful envelope is returned", arguments: successes)
    func success(_ variant: Variant) async throws {
        let user = try await client(answering: variant.body, format: variant.format)
            .send(Endpoint<User>.get("me"))
        #expect(user == User(id: 7, name: "Ann"))
    }

    @Test(
        "an endpoint that expects no payload accepts data missing or null",
        arguments: [
            #"{"code":0,"msg":"ok"}"#, #"{"code":0,"msg":"ok","data":null}"#, #"{"code":0,"data":{"ignored":true}}"#,
        ])
    func emptyPayload(_ body: String) async throws {
        let result = try await client(answering: body).send(Endpoint<EmptyResponse>.post("logout"))
        #expect(result == EmptyResponse())
    }

    @Test(
        "an optional payload is nil when data is missing or null",
        arguments: [#"{"code":0,"msg":"ok"}"#, #"{"code":0,"msg":"ok","data":null}"#])
    func optionalPayload(_ body: String) async throws {
        let user = try await client(answering: body).send(Endpoint<User?>.get("maybe"))
        #expect(user == nil)
    }

    @Test("a JSON5 client reads a body with bytes that are not UTF-8 in a key as an error or a value, never a crash")
    func json5KeyNotUTF8() async throws {
        // Foundation's JSON5 reader ends the process on this (found by the fuzz target).
        let body = Data("{".utf8) + [0xFF, 0xFF, 0xFF] + Data(#""code":true}"#.utf8)
        let transport = MockTransport { _ in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
        let configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!, transport: transport)
        configuration.decoder.allowsJSON5 = true
        let client = NetworkClient(configuration: configuration)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Endpoint<User>.get("me")) }
        #expect(error?.code == .decodingFailed)
    }

    @Test("a missing payload for an endpoint that needs one is a decoding failure naming the key")
    func missingPayload() async throws {
        let error = await networkError {
            _ = try await client(answering: #"{"code":0,"msg":"ok"}"#).send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.codingPath == "data")
    }

    @Test("a failing code throws business with the code and message, whatever shape data has")
    func businessError() async throws {
        let error = await networkError {
            _ = try await client(answering: #"{"code":1001,"msg":"Order not found","data":"not-an-object"}"#)
                .send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .business)
        #expect(error?.businessCode == 1001)
        #expect(error?.businessMessage == "Order not found")
        #expect(error?.message == "Order not found")
    }

    @Test("a failing code without a message gets the format's default message")
    func defaultMessage() async throws {
        let format = EnvelopeFormat(codeKey: "result", successCodes: [1], defaultMessage: "请求失败")
        let error = await networkError {
            _ = try await client(answering: #"{"result":"0"}"#, format: format).send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .business)
        #expect(error?.businessCode == 0)
        #expect(error?.businessMessage == "请求失败")
    }

    @Test("a payload of the wrong shape names the type and the coding path")
    func wrongShape() async throws {
        let error = await networkError {
            _ = try await client(answering: #"{"code":0,"data":[{"id":1,"name":"a"},{"id":"two","name":"b"}]}"#)
                .send(Endpoint<[User]>.get("users"))
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.codingPath == "data[1].id")
        #expect(error?.message.contains("Array<User>") == true)
        #expect(error?.description.contains(#""id":"two""#) == true, "the description carries a body snippet")
    }

    @Test("malformed JSON is a decoding failure with a bounded snippet")
    func malformed() async throws {
        let garbage = "{\"code\":0,\"data\":" + String(repeating: "x", count: 5000)
        let error = await networkError { _ = try await client(answering: garbage).send(Endpoint<User>.get("me")) }
        #expect(error?.code == .decodingFailed)
        let description = try #require(error?.description)
        #expect(description.count < NetworkError.snippetLimit + 600)
        #expect(description.contains("(5017 bytes)"))
    }

    @Test("plain JSON, raw data and the whole response are read without an envelope")
    func otherDecodings() async throws {
        let body = #"{"id":7,"name":"Ann"}"#
        let plain = try await client(answering: body).send(Endpoint<User>.get("me", decoding: .json))
        #expect(plain == User(id: 7, name: "Ann"))
        let raw = try await client(answering: body).send(Endpoint<Data>.get("me", decoding: .data))
        #expect(raw == Data(body.utf8))
        let whole = try await client(answering: body).send(
            Endpoint<HTTPResponse>(method: .get, path: "me", decoding: .response))
        #expect(whole.status == 200 && whole.body == Data(body.utf8))
    }

    @Test("BaseModel decodes on its own with the format in userInfo")
    func baseModelDirectly() throws {
        let decoder = JSONDecoder()
        decoder.userInfo[.envelopeFormat] = EnvelopeFormat(codeKey: "result", messageKey: "message", successCodes: [1])
        let model = try decoder.decode(
            BaseModel<User>.self, from: Data(#"{"result":"1","message":"hi","data":{"id":1,"name":"a"}}"#.utf8))
        #expect(model.code == 1 && model.isSuccess && model.message == "hi" && model.data == User(id: 1, name: "a"))
    }
}
