import Courier
import Testing

@Suite struct RedactionTests {
    @Test(
        "secret values are hidden in JSON, forms and queries; other values are kept",
        arguments: [
            (#"{"token":"abc","page":1}"#, #"{"token":<redacted>,"page":1}"#),
            (#"{"access_token" : "a\"b", "name":"x"}"#, #"{"access_token" : <redacted>, "name":"x"}"#),
            ("user=ann&password=hunter2&sign=ff00", "user=ann&password=<redacted>&sign=<redacted>"),
            ("GET /x?apiKey=k1&q=tea", "GET /x?apiKey=<redacted>&q=tea"),
            (#"{"Session":{"id":1,"k":"}"},"page":2}"#, #"{"Session":<redacted>,"page":2}"#),
            (#"{"tokens":["a","b"],"x":1}"#, #"{"tokens":<redacted>,"x":1}"#),
        ])
    func redacts(_ input: String, _ expected: String) {
        #expect(Redaction.redactText(input) == expected)
    }

    @Test("secret names are recognised in any case and form")
    func names() {
        let secret = [
            "token", "X-Auth-Token", "Authorization", "PASSWORD", "client_secret", "sign", "Cookie", "X-KC-HMAC",
        ]
        #expect(secret.allSatisfy { Redaction.isSecret($0) })
        #expect(!["page", "deviceId", "version", "os", "title"].contains { Redaction.isSecret($0) })
        #expect(Redaction.isSecret("idCard", extra: ["idcard"]))
    }
}
