import Courier
import CourierTesting
import Foundation
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
            // Found by the fuzz target: a key holding a pair of its own, and JSON written inside
            // a JSON string (a body logged as text), also with an escaped quote in the value.
            (#"{"note token=abc": 1}"#, #"{"note token=<redacted>": <redacted>}"#),
            (#"{"sign=v2": "S"}"#, #"{"sign=<redacted>": <redacted>}"#),
            (#"{"body":"{\"token\":\"abc\",\"page\":1}"}"#, #"{"body":"{\"token\":\"<redacted>\",\"page\":1}"}"#),
            (
                #"{"body":"{\"password\":\"p\\\"ss\",\"page\":1}"}"#,
                #"{"body":"{\"password\":\"<redacted>\",\"page\":1}"}"#
            ),
            ("{\"token\":\t\"abc\"}", "{\"token\":\t<redacted>}"),
            // A quoted value of `name=`: its closing quote may open the next JSON key.
            (#""key=" "password": "pw""#, #""key="<redacted>"password": <redacted>"#),
            (#"Digest username="ann", signature="ff00""#, #"Digest username="ann", signature="<redacted>""#),
            ("a=1 key=", "a=1 key=<redacted>"), (#"key=""#, #"key=<redacted>"#),
            // The same inside a JSON string, where the quotes are escaped; also after a key
            // in quotes whose value is such a string.
            (
                #"{"body":"key=\":\""} \"token\":\"v\""#,
                #"{"body":"key=<redacted>":\"<redacted>\"token\":\"<redacted>\""#
            ),
            (#"{"body":"key=\" \"password\":\"pw\""}"#, #"{"body":"key=\"<redacted>\"password\":\"<redacted>\""}"#),
            // What looked like an escaped key ending (`\":`) was the end of the string, and the
            // quoted value after it ends where the next key opens.
            (
                #"{"body":"key=Collection\":"} "password": "pw""#,
                #"{"body":"key=<redacted>":"<redacted>"password": <redacted>"#
            ),
            (
                #"{"error":"bad body {\"q\":\"reset token=\",\"password\":\"pw\"}"}"#,
                #"{"error":"bad body {\"q\":\"reset token=\"<redacted>\"password\":\"<redacted>\"}"}"#
            ),
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
        #expect(
            Redaction.redactText(#"{"body":"{\"pin\":\"1234\"}"}"#, extra: ["pin"])
                == #"{"body":"{\"pin\":\"<redacted>\"}"}"#)
    }

    @Test(
        "the user name and password of a URL are hidden wherever the URL appears",
        arguments: [
            ("GET http://alice:secret@host/x", "GET http://<redacted>@host/x"),
            (
                "see https://alice@host.example and ftp://a:b@c/d",
                "see https://<redacted>@host.example and ftp://<redacted>@c/d"
            ),
            ("\"http://a:p%40ss@h:8080?q=1\"", "\"http://<redacted>@h:8080?q=1\""),
            ("http://host/path@here ann@example.com", "http://host/path@here ann@example.com"),
            (#"{"hook":"https:\/\/bob:pw@h\/x"}"#, #"{"hook":"https:\/\/<redacted>@h\/x"}"#),
            ("next=https%3A%2F%2Fbob%3Apw%40intranet%2F&q=1", "next=https%3A%2F%2F<redacted>%40intranet%2F&q=1"),
            ("GET http://bob:p#ss@api/x", "GET http://<redacted>@api/x"),
            ("GET http://bob:p/ss@api/x", "GET http://<redacted>@api/x"),
            ("next=https%3A//bob%3Apw%40h/x", "next=https%3A//<redacted>%40h/x"),
            ("r=https%253A%252F%252Fbob%253Apw%2540h%252Fx", "r=https%253A%252F%252F<redacted>%2540h%252Fx"),
        ])
    func userInfo(_ input: String, _ expected: String) {
        #expect(Redaction.redactText(input) == expected)
    }

    @Test("a request to a URL with a user name and password keeps both out of errors and logs")
    func userInfoOverTheWire() async throws {
        let sink = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: sink, includesDetails: true)] }
        defer { backend.server.stop() }
        let url = "http://alice:hunter2@127.0.0.1:\(backend.server.port)/v1/missing"
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get(url)) }

        #expect(error?.status == 404)
        let text = "\(String(describing: error))\n\(sink.lines.joined(separator: "\n"))"
        #expect(!text.contains("alice") && !text.contains("hunter2"), "\(text)")
        #expect(text.contains("http://<redacted>@127.0.0.1"))
    }

    @Test("a URL with a password inside a query value keeps it out of errors, logs and curl commands")
    func userInfoInQueryValue() async throws {
        let sink = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: sink, includesCurlCommands: true)] }
        defer { backend.server.stop() }
        let error = await networkError {
            _ = try await backend.client.send(
                Endpoint<String>.get("missing", query: ["next": "https://bob:hunter2@intranet/x"]))
        }

        #expect(error?.status == 404)
        #expect(backend.server.requests.first?.query["next"] == "https://bob:hunter2@intranet/x", "sent as it is")
        let text = "\(String(describing: error))\n\(sink.lines.joined(separator: "\n"))"
        #expect(!text.contains("hunter2") && !text.contains("bob"), "\(text)")
        #expect(text.contains("next=https%3A%2F%2F<redacted>%40intranet%2Fx"), "\(text)")
    }

    @Test("an error's user-facing description is its message (the backend's, for a business error), redacted")
    func localizedDescription() {
        var business = NetworkError(.business, "The backend answered code 20001.")
        business.businessMessage = "Insufficient balance"
        #expect(business.localizedDescription == "Insufficient balance")
        var failed = NetworkError(.transport, "Could not reach http://ann:pw@host/x")
        failed.request = "GET http://host/x?token=<redacted>"
        #expect(failed.localizedDescription == "Could not reach http://<redacted>@host/x")
        var forbidden = NetworkError(.httpStatus, "The server answered 403.")
        forbidden.businessMessage = "token expired"
        forbidden.userMessage = "Please sign in again"
        #expect(forbidden.localizedDescription == "Please sign in again")
    }

    @Test("a server's message of any length is shown cut short, so redacting it stays quick")
    func longMessage() {
        var error = NetworkError(.business, "The backend answered code 1.")
        // Each `://` sends redaction looking for a user name; a long run of them once took
        // time that grew with the square of the length.
        error.businessMessage = String(repeating: "a:// ", count: 1_000)
        error.userMessage = error.businessMessage
        #expect(error.description.count < 3 * 2_048)
        #expect(error.description.contains("… (5000 characters)"))
        #expect(error.localizedDescription.count < 2 * 2_048)
        // A cut in the middle of a secret drops it whole.
        for url in ["https://ann:hunter2@host/", "https%3A%2F%2Fann%3Ahunter2%40host", #"https:\/\/ann:hunter2@host"#] {
            error.businessMessage = String(repeating: "x", count: 2_030) + " " + url
            #expect(!error.description.contains("hunt"), "\(url)")
        }
    }
}
