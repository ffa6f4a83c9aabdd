import Courier
import Foundation
import Testing

/// Shapes of secrets beyond JSON, forms and URLs: other languages' descriptions, markup, quotes
/// out of step, credentials without a name; and inputs built to make redaction slow or trap.
@Suite struct RedactionShapesTests {
    let redactor = Redactor.standard

    @Test(
        "secrets in the shapes logs and messages take: other languages, markup, wrappers, stray quotes",
        arguments: [
            // A stray quote earlier in a message runs the quotes out of step.
            #"{"error":"Unexpected token \" in JSON: {\"password\":\"hunter2\"}"}"#,
            #"refresh failed: AuthError(token: Optional("hunter2.x.y"))"#,
            "ValueError: bad payload {'username': 'bob', 'password': 'hunter2'}",
            #"{"password"=>"hunter2"}"#,
            "Array\n(\n    [password] => hunter2\n)",
            "{\n    \"X-Auth-Token\" =     (\n        hunter2\n    );\n}",
            "<Login><User>bob</User><Password>hunter2</Password></Login>",
            "<soap:Envelope><ns:Token a=\"1\">hunter2</ns:Token></soap:Envelope>",
            #"{\"path\":\"C:\\\\\",\"password\":\"hunter2\"}"#,
            "the header was Bearer hunter2Abc.def and it expired",
            "got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.hunter2sig back",
            "password=<hunter2>", "password=<redacted>hunter2", "pwd2=hunter2", "smsCode=hunter2",
            "verify_code=hunter2", "passphrase=hunter2", "code_verifier=hunter2", "Authentication: hunter2",
            "ПАРОЛЬ=hunter2",
            #"AuthError.invalid(Credential.apiKey("hunter2"))"#, #"failed: .password("hunter2")"#,
            "    Cookie: theme=dark; remember_web=hunter2",
            "> Authorization: Digest username=\"bob\", response=\"hunter2\"",
            #"{"key":"X-Api-Key","value":"hunter2"}"#, "pins=hunter2", "private_keys=hunter2",

        ])
    func shapes(_ input: String) {
        let redactor = self.redactor.adding(["пароль"])
        let redacted = redactor.redact(text: input)
        #expect(!redacted.contains("hunter2"), "\(redacted)")
        #expect(!redactor.redact(body: Data(input.utf8), contentType: nil).contains("hunter2"))
    }

    @Test("JSON that does not start with a brace is still read as JSON: a byte order mark, JSONP")
    func jsonWithAPrefix() {
        for body in [
            "\u{FEFF}{\"avatar\":\"https://cdn/x.png?v=2\",\"token\":\"hunter2\"}",
            #"cb({"a":"x=1","token":"hunter2"})"#,
        ] {
            let redacted = redactor.redact(body: Data(body.utf8), contentType: "application/json")
            #expect(!redacted.contains("hunter2"), "\(redacted)")
            #expect(redacted.contains("https://cdn/x.png?v=2") == body.contains("https://cdn/x.png?v=2"))
        }
    }

    @Test("a secret name written as a value names the value beside it: HAR headers, field lists")
    func namedValues() {
        let har = #"{"headers":[{"name":"Authorization","value":"Bearer hunter2"},{"name":"Accept","value":"*/*"}]}"#
        #expect(
            redactor.redact(body: Data(har.utf8), contentType: "application/json")
                == #"{"headers":[{"name":"Authorization","value":"<redacted>"},{"name":"Accept","value":"*/*"}]}"#)
        let fields = #"[{"field": "api_key", "value": 12345}, {"field": "page", "value": 2}]"#
        #expect(
            redactor.redact(text: fields)
                == #"[{"field": "api_key", "value": "<redacted>"}, {"field": "page", "value": 2}]"#)
    }

    @Test("a multipart body with bare line feeds, and a URL relative to its scheme")
    func lenientShapes() {
        let multipart = "--B\nContent-Disposition: form-data; name=\"password\"\n\nhunter2\n--B--\n"
        let redacted = redactor.redact(body: Data(multipart.utf8), contentType: "multipart/form-data; boundary=B")
        #expect(!redacted.contains("hunter2") && redacted.contains("name=\"password\"\n\n<redacted>\n--B--"))
        // The first blank line ends the part's headers, whichever line breaks it has.
        let mixed = "--B\nContent-Disposition: form-data; name=\"password\"\n\nhunter2\r\n\r\nx\n--B--"
        #expect(
            !redactor.redact(body: Data(mixed.utf8), contentType: "multipart/form-data; boundary=B").contains("hunter2")
        )
        #expect(redactor.redact(headers: ["Location": "//bob:hunter2@host/x"])["Location"] == "//<redacted>@host/x")
        #expect(
            redactor.redact(headers: ["Link": "<token=hunter2&page=1>; rel=\"next\""])["Link"]
                == "<token=<redacted>&page=1>; rel=\"next\"")
        #expect(
            redactor.redact(headers: ["Link": "<Authorization: Bearer hunter2>; rel=\"next\""])["Link"]
                == "<Authorization: <redacted>>; rel=\"next\"")
        #expect(
            redactor.redact(text: #"<ns:Token a="1" pin="hunter2">hunter3</ns:Token><Password/>next"#)
                == #"<ns:Token a="1" pin=<redacted>><redacted></ns:Token><Password/>next"#)
    }

    @Test("a message for the app's user keeps its words after a colon; the log hides them")
    func prose() {
        var error = NetworkError(.business, "The backend answered code 7.")
        error.businessMessage = "Invalid token: please log in again"
        #expect(error.localizedDescription == "Invalid token: please log in again")
        error.businessMessage = "Wrong password: 2 attempts left"
        #expect(error.localizedDescription == "Wrong password: 2 attempts left")
        error.businessMessage = "Invalid token: eyJ4Yz.abc.def"
        #expect(error.localizedDescription == "Invalid token: <redacted>")
        error.businessMessage = "Basic plan chosen"
        #expect(error.localizedDescription == "Basic plan chosen")
        #expect(redactor.redact(text: "sent Bearer abcdefghijklmnop") == "sent Bearer <redacted>")
    }

    @Test("inputs built to be slow or to trap finish, each in one pass")
    func hostileInputs() async {
        let redactor = self.redactor
        let failures: [String] = await offThePool {
            var failures: [String] = []
            func check(_ holds: Bool, _ what: String) { if !holds { failures.append(what) } }
            check(redactor.redact(text: String(repeating: "eyJ/", count: 50_000)).hasPrefix("eyJ/eyJ/"), "JWT scan")
            let magic = "https://app/magic/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2ln#eyJhbGciOi.eyJzdWIi.c2ln"
            check(redactor.redact(url: magic) == "https://app/magic/<redacted>#<redacted>", "JWT in a URL")
            let backslashes = "/" + String(repeating: "\\", count: 100_000) + "/"
            check(!redactor.redact(body: Data(backslashes.utf8), contentType: "text/plain").isEmpty, "backslashes")
            check(redactor.redact(headers: ["Location": backslashes])["Location"]?.isEmpty == false, "in a header")
            let longPath = "https://h/" + String(repeating: "a", count: 200_000) + "%41"
            check(redactor.redact(text: longPath).hasSuffix("%41"), "long path")
            let boundary = String(repeating: "-", count: 100_000) + "x"
            let dashes = Data(String(repeating: "-", count: 200_000).utf8)
            check(
                !redactor.redact(body: dashes, contentType: "multipart/form-data; boundary=" + boundary).isEmpty,
                "long boundary")
            check(redactor.redact(text: "token=abc", limit: -1) == "… (9 characters)", "negative limit")
            var nested = String(repeating: "b", count: 20_000) + " y"
            for _ in 0..<8 { nested = "a=" + PercentEncoding.encode(nested) + " y" }
            check(redactor.redact(text: nested).hasSuffix(" y"), "nested encodings")
            return failures
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
