import Courier
import CourierTesting
import Foundation
import Testing

/// Envelopes as backends write them: string codes, a boolean success flag, nested keys.
@Suite struct EnvelopeShapeTests {
    struct User: Codable, Sendable, Equatable {
        let id: Int
        let name: String
    }

    static let nested = EnvelopeFormat(
        codeKey: "meta.code", messageKey: "meta.msg", dataKey: "result.data", successCodes: ["A0000"])
    static let flagged = EnvelopeFormat(codeKey: "errorCode", messageKey: "errorMessage", successKey: "success")

    private func client(answering body: String, format: EnvelopeFormat, status: Int = 200) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: format,
                transport: MockTransport { _ in .json(body, status: status) }))
    }

    @Test("a string code is a code: a success code decodes, another throws business with that code")
    func stringCodes() async throws {
        let format = EnvelopeFormat(successCodes: ["A0000"])
        let user = try await client(answering: #"{"code":"A0000","data":{"id":1,"name":"Ann"}}"#, format: format)
            .send(Endpoint<User>.get("me"))
        #expect(user == User(id: 1, name: "Ann"))
        let error = await networkError {
            _ = try await client(answering: #"{"code":"A0230","msg":"quota"}"#, format: format)
                .send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .business)
        #expect(error?.businessCode == "A0230")
        #expect(error?.businessMessage == "quota")
    }

    @Test("a numeric string and its number are one code; a string is not a number")
    func codeEquality() {
        #expect(BusinessCode("0") == 0)
        #expect(BusinessCode(" 007") == 7)
        #expect(BusinessCode("A0001") != 1)
        #expect(BusinessCode("A0001").number == nil && BusinessCode(99).number == 99)
        #expect(Set<BusinessCode>([0, "0", "A1", "A1"]).count == 2)
        #expect("\(BusinessCode("A0001")) \(BusinessCode(99))" == "A0001 99")
    }

    @Test("only decimal digits make a number; spaces and line breaks around a code are not part of it")
    func codeNormalisation() {
        #expect(BusinessCode("5\n") == 5 && BusinessCode("\t-12 ") == -12)
        #expect(BusinessCode("A1 ") == "A1")
        for text in ["+5", "0x10", "1e3", "٣", "-", "", "99999999999999999999"] {
            #expect(BusinessCode(text).number == nil, "\(text.debugDescription) is text")
        }
    }

    @Test("an error's description shows a server's code on one line, without invisible formatting")
    func codeShownSafely() {
        var error = NetworkError(.business, "refused")
        error.businessCode = BusinessCode("E1\u{202E}\u{2028}x\ny")
        #expect(error.description.contains("business code: E1??x?y"), "\(error.description)")
    }

    @Test("codes round-trip through Codable as the number or the string they are")
    func codeCodable() throws {
        let codes: [BusinessCode] = [0, "A0001", -7]
        let text = String(decoding: try JSONEncoder().encode(codes), as: UTF8.self)
        #expect(text == #"[0,"A0001",-7]"#)
        #expect(try JSONDecoder().decode([BusinessCode].self, from: Data(text.utf8)) == codes)
        for bad in ["[true]", "[1.5]", "[null]", "[{}]"] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode([BusinessCode].self, from: Data(bad.utf8)) }
        }
    }

    @Test("nested keys: the code, message and payload are read from inside objects")
    func nestedKeys() async throws {
        let ok = #"{"meta":{"code":"A0000","msg":"ok"},"result":{"data":{"id":2,"name":"Bo"}}}"#
        #expect(
            try await client(answering: ok, format: Self.nested).send(Endpoint<User>.get("me"))
                == User(id: 2, name: "Bo"))
        let failing = #"{"meta":{"code":"B0001","msg":"banned"},"result":null}"#
        let error = await networkError {
            _ = try await client(answering: failing, format: Self.nested).send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .business)
        #expect(error?.businessCode == "B0001")
        #expect(error?.businessMessage == "banned")
    }

    @Test("nested keys: a missing code names its whole path; a missing payload is reported")
    func nestedMissing() async throws {
        let noCode = await networkError {
            _ = try await client(answering: #"{"meta":{}}"#, format: Self.nested).send(Endpoint<User>.get("me"))
        }
        #expect(noCode?.code == .decodingFailed)
        #expect(noCode?.codingPath == "meta.code")
        let noMeta = await networkError {
            _ = try await client(answering: #"{"result":{}}"#, format: Self.nested).send(Endpoint<User>.get("me"))
        }
        #expect(noMeta?.codingPath == "meta")
        let noData = await networkError {
            _ = try await client(answering: #"{"meta":{"code":"A0000"}}"#, format: Self.nested)
                .send(Endpoint<User>.get("me"))
        }
        #expect(noData?.code == .decodingFailed)
        let empty = try await client(answering: #"{"meta":{"code":"A0000"},"result":{}}"#, format: Self.nested)
            .send(Endpoint<EmptyResponse>.get("me"))
        #expect(empty == EmptyResponse())
    }

    @Test("a success flag decides alone: true decodes whatever the code, false throws with the code if any")
    func successFlag() async throws {
        let user = try await client(
            answering: #"{"success":true,"errorCode":"7","data":{"id":3,"name":"Cy"}}"#, format: Self.flagged
        ).send(Endpoint<User>.get("me"))
        #expect(user == User(id: 3, name: "Cy"))
        let withCode = await networkError {
            _ = try await client(
                answering: #"{"success":false,"errorCode":"A0230","errorMessage":"quota"}"#, format: Self.flagged
            )
            .send(Endpoint<User>.get("me"))
        }
        #expect(withCode?.code == .business)
        #expect(withCode?.businessCode == "A0230")
        #expect(withCode?.businessMessage == "quota")
        let without = await networkError {
            _ = try await client(answering: #"{"success":false,"errorCode":null}"#, format: Self.flagged)
                .send(Endpoint<User>.get("me"))
        }
        #expect(without?.code == .business)
        #expect(without?.businessCode == nil)
        #expect(without?.businessMessage == "Request failed")
    }

    @Test(
        "a success flag that is missing or not a boolean is a decoding failure",
        arguments: [
            #"{"errorCode":0,"data":{"id":1,"name":"a"}}"#, #"{"success":"true","data":{"id":1,"name":"a"}}"#,
            #"{"success":1,"data":{"id":1,"name":"a"}}"#,
        ])
    func badFlag(body: String) async throws {
        let error = await networkError {
            _ = try await client(answering: body, format: Self.flagged).send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.codingPath == "success")
    }

    @Test("an error status's body in a nested format fills in the code and message")
    func nestedStatusError() async throws {
        let error = await networkError {
            _ = try await client(
                answering: #"{"meta":{"code":"C0500","msg":"try later"}}"#, format: Self.nested, status: 503
            ).send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.businessCode == "C0500")
        #expect(error?.businessMessage == "try later")
    }

    @Test("an error status's envelope whose payload key is content, null, keeps its code and message")
    func contentKeyedEnvelope() async throws {
        let format = EnvelopeFormat(dataKey: "content")
        let error = await networkError {
            _ = try await client(answering: #"{"code":"E1","msg":"down","content":null}"#, format: format, status: 503)
                .send(Endpoint<User>.get("me"))
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.businessCode == "E1" && error?.businessMessage == "down")
    }

    @Test("the session's silent login reacts to a string code, in a nested format, and hears it")
    func reLoginOnStringCode() async throws {
        let logins = Counter()
        let heard = Log()
        let transport = MockTransport { request in
            if request.url.path.hasSuffix("/login") {
                return try .envelope(code: "A0000", data: "s1", format: Self.nested)
            }
            return request.headers["session"] == "s1"
                ? try .envelope(code: "A0000", data: "fine", format: Self.nested)
                : try .envelope(code: "L0099", message: "log in", data: 0, format: Self.nested)
        }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "none")), placement: .header("session"),
            logInCodes: ["L0099"],
            logIn: { login in
                _ = logins.increment()
                heard.append(login.businessCode.map { "\($0)" } ?? "-")
                return Credential(accessToken: try await login.client.send(Endpoint<String>.post("login")))
            })
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: Self.nested, session: session,
                transport: transport))
        #expect(try await client.send(Endpoint<String>.get("data")) == "fine")
        #expect(logins.increment() == 2, "one login, then this probe")
        #expect(heard.all == ["L0099"])
    }

    @Test(
        "a success flag that says the call succeeded wins over a code the session watches: no login, sent once")
    func flaggedSuccessIsNotALoginRequest() async throws {
        let logins = Counter()
        let transport = MockTransport { _ in .json(#"{"success":true,"errorCode":99,"data":"placed"}"#) }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "a")), logInCodes: [99],
            logIn: { _ in
                _ = logins.increment()
                return Credential(accessToken: "b")
            })
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: Self.flagged, session: session,
                transport: transport))
        #expect(try await client.send(Endpoint<String>.post("orders")) == "placed")
        #expect(logins.increment() == 1, "no login")
        #expect(transport.requests.count == 1)
    }

    @Test("CourierTesting writes nested keys and the success flag as the client reads them")
    func testingHelpersWriteTheFormat() throws {
        let response = try HTTPResponse.envelope(code: "A0000", message: "ok", data: [1, 2], format: Self.nested)
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let meta = try #require(object["meta"] as? [String: Any])
        #expect(meta["code"] as? String == "A0000" && meta["msg"] as? String == "ok")
        #expect((object["result"] as? [String: Any])?["data"] as? [Int] == [1, 2])
        let flagged = try HTTPResponse.envelope(code: 5, data: 0, format: Self.flagged)
        let flaggedObject = try #require(try JSONSerialization.jsonObject(with: flagged.body) as? [String: Any])
        #expect(flaggedObject["success"] as? Bool == false && flaggedObject["errorCode"] as? Int == 5)
    }
}
