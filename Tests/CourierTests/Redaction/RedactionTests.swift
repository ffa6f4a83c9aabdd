import Courier
import Foundation
import Testing

/// What each of the redactor's readers hides, shape by shape.
@Suite struct RedactionTests {
    let redactor = Redactor.standard

    @Test(
        "JSON: a secret key's value is replaced whole; other values are kept, and read for what they hold",
        arguments: [
            (#"{"token":"abc","page":1}"#, #"{"token":"<redacted>","page":1}"#),
            (#"{"access_token" : "a\"b", "name":"x"}"#, #"{"access_token" : "<redacted>", "name":"x"}"#),
            (#"{"Session":{"id":1,"k":"}"},"page":2}"#, #"{"Session":"<redacted>","page":2}"#),
            (#"{"tokens":["a","b"],"x":1}"#, #"{"tokens":"<redacted>","x":1}"#),
            (#"{"pin":1234,"n":5}"#, #"{"pin":"<redacted>","n":5}"#),
            ("{\"token\":\t\"abc\"}", "{\"token\":\t\"<redacted>\"}"),
            (#"{"body":"{\"token\":\"abc\",\"page\":1}"}"#, #"{"body":"{\"token\":\"<redacted>\",\"page\":1}"}"#),
            (
                #"{"body":"{\"password\":\"p\\\"ss\",\"page\":1}"}"#,
                #"{"body":"{\"password\":\"<redacted>\",\"page\":1}"}"#
            ),
            // JSON escaped twice inside a message: the value after the key is hidden too.
            (
                #"{"error":"bad {\"detail\":\"{\\\"token\\\":\\\"S3cr\\\"}\"}"}"#,
                #"{"error":"bad {\"detail\":\"{\\\"token\\\":\\\"<redacted>\\\"}\"}"}"#
            ),
            // A URL in a string, written with escaped slashes, and a query in one.
            (#"{"hook":"https:\/\/bob:pw@h\/x"}"#, #"{"hook":"https:\/\/<redacted>@h\/x"}"#),
            (#"{"q":"a=1&sign=ff"}"#, #"{"q":"a=1&sign=<redacted>"}"#),
            // An envelope's code and message stay visible, even when the message names a secret.
            (#"{"code":99,"msg":"token expired","data":null}"#, #"{"code":99,"msg":"token expired","data":null}"#),
        ])
    func json(_ input: String, _ expected: String) {
        #expect(redactor.redact(body: Data(input.utf8), contentType: "application/json") == expected)
        #expect(redactor.redact(text: input) == expected)
        #expect(redactor.redact(text: expected) == expected, "redacting again changes nothing")
    }

    @Test(
        "free text: pairs, header lines, escaped JSON and URLs in prose",
        arguments: [
            ("user=ann&password=hunter2&sign=ff00", "user=ann&password=<redacted>&sign=<redacted>"),
            ("GET /x?apiKey=k1&q=tea", "GET /x?apiKey=<redacted>&q=tea"),
            (#"Digest username="ann", signature="ff00""#, #"Digest username="ann", signature=<redacted>"#),
            ("a=1 key=", "a=1 key=<redacted>"),
            ("password= hunter2 next", "password= <redacted> next"),
            ("failed: token: abc123, retry", "failed: token: <redacted>, retry"),
            ("Authorization: Bearer abc.def\nAccept: */*", "Authorization: <redacted>\nAccept: */*"),
            ("sent Authorization: Bearer abc.def later", "sent Authorization: <redacted> later"),
            // Two levels of escaping, outside any string.
            (#"log {\\\"token\\\":\\\"S3cr\\\"} end"#, #"log {\\\"token\\\":\\\"<redacted>\\\"} end"#),
            (#"raw \"password\":\"S3cr\""#, #"raw \"password\":\"<redacted>\""#),
            (
                "see https://alice@host.example and ftp://a:b@c/d",
                "see https://<redacted>@host.example and ftp://<redacted>@c/d"
            ),
            ("https%3A%2F%2Fann%3AS3cr%40example.com", "https%3A%2F%2F<redacted>%40example.com"),
            ("plain words, nothing: 12 = 12", "plain words, nothing: 12 = 12"),
        ])
    func text(_ input: String, _ expected: String) {
        #expect(redactor.redact(text: input) == expected)
        #expect(redactor.redact(text: expected) == expected, "redacting again changes nothing")
    }

    @Test(
        "URLs: user information, query pairs by decoded name, values holding URLs, queries or JSON at any encoding",
        arguments: [
            ("http://alice:secret@host/x", "http://<redacted>@host/x"),
            ("http://a:p%40ss@h:8080?q=1", "http://<redacted>@h:8080?q=1"),
            ("http://bob:p#ss@api/x", "http://<redacted>@api/x"),
            ("http://bob:p/ss@api/x", "http://<redacted>@api/x"),
            ("http://host:8080/path@here?mail=ann@example.com", "http://host:8080/path@here?mail=ann@example.com"),
            (
                "https://api/x?next=https%3A%2F%2Fapp%2Fcb%3Faccess_token%3DX1&page=1",
                "https://api/x?next=https%3A%2F%2Fapp%2Fcb%3Faccess_token%3D<redacted>&page=1"
            ),
            (
                "https://api/x?next=https%253A%252F%252Fapp%252Fcb%253Faccess_token%253DX1",
                "https://api/x?next=https%253A%252F%252Fapp%252Fcb%253Faccess_token%253D<redacted>"
            ),
            (
                "https://api/x?r=https%253A%252F%252Fbob%253Apw%2540h%252Fx",
                "https://api/x?r=https%253A%252F%252F<redacted>%2540h%252Fx"
            ),
            ("https://api/x?next=https%3A//bob%3Apw%40h/x", "https://api/x?next=https%3A%2F%2F<redacted>%40h%2Fx"),
            (
                "https://h/x?user%5Bpassword%5D=p1&account[api_key]=p2&a.b.token=p3&signup[email]=e",
                "https://h/x?user%5Bpassword%5D=<redacted>&account[api_key]=<redacted>&a.b.token=<redacted>&signup[email]=e"
            ),
            ("https://h/x?q=%7B%22token%22%3A%22S%22%7D", "https://h/x?q=%7B%22token%22%3A%22<redacted>%22%7D"),
            ("https://h/app;jsessionid=ABC/x?y=1", "https://h/app;jsessionid=<redacted>/x?y=1"),
            ("https://h/cb#access_token=T&state=s", "https://h/cb#access_token=<redacted>&state=s"),
            (
                "/v1/x?pass=1&jwt=2&client_assertion=3&otp=4&pin=5&shipping=6",
                "/v1/x?pass=<redacted>&jwt=<redacted>&client_assertion=<redacted>&otp=<redacted>&pin=<redacted>&shipping=6"
            ),
        ])
    func url(_ input: String, _ expected: String) {
        #expect(redactor.redact(url: input) == expected)
        #expect(redactor.redact(url: expected) == expected, "redacting again changes nothing")
    }

    @Test("headers: secret names hidden whole, URLs inside the others read")
    func headers() {
        let headers: HTTPHeaders = [
            "Authorization": "Bearer T1", "Cookie": "a=1; b=2", "Set-Cookie": "sid=S2; Path=/",
            "Referer": "https://app.example/cb?access_token=T3&x=1",
            "X-Callback-URL": "https://admin:T4@hooks.example/in",
            "Link": "<https://api.example/p?page=2&sign=T5>; rel=\"next\"", "Accept": "application/json",
        ]
        let redacted = redactor.redact(headers: headers)
        #expect(redacted.fields.map(\.name) == headers.fields.map(\.name))
        #expect(redacted["Authorization"] == "<redacted>" && redacted["Cookie"] == "<redacted>")
        #expect(redacted["Set-Cookie"] == "<redacted>")
        #expect(redacted["Referer"] == "https://app.example/cb?access_token=<redacted>&x=1")
        #expect(redacted["X-Callback-URL"] == "https://<redacted>@hooks.example/in")
        #expect(redacted["Link"] == "<https://api.example/p?page=2&sign=<redacted>>; rel=\"next\"")
        #expect(redacted["Accept"] == "application/json")
    }

    @Test("bodies are read as their media type says: forms with nested names, multipart text fields")
    func bodies() {
        let form = "user[password]=hunter2&name=ann&note=see+https%3A%2F%2Fa%3Ab%40h"
        #expect(
            redactor.redact(body: Data(form.utf8), contentType: "application/x-www-form-urlencoded")
                == "user[password]=<redacted>&name=ann&note=see%20https%3A%2F%2F<redacted>%40h")
        let multipart = [
            "--B1", "Content-Disposition: form-data; name=\"user[password]\"", "", "hunter2", "--B1",
            "Content-Disposition: form-data; name=\"note\"", "", "call https://ann:pw9@h/x", "--B1",
            "Content-Disposition: form-data; name=\"file\"; filename=\"password.txt\"", "", "plain", "--B1--", "",
        ].joined(separator: "\r\n")
        let redacted = redactor.redact(body: Data(multipart.utf8), contentType: "multipart/form-data; boundary=B1")
        #expect(!redacted.contains("hunter2") && !redacted.contains("pw9"), "\(redacted)")
        #expect(redacted.contains("name=\"user[password]\"\r\n\r\n<redacted>\r\n--B1"), "\(redacted)")
        #expect(redacted.contains("call https://<redacted>@h/x") && redacted.contains("\r\n\r\nplain\r\n--B1--"))
    }

    @Test("an excerpt is cut after redacting: a cut at any offset of a secret shows none of it")
    func excerptCutAnywhere() {
        let url = "https://ann:hunter2@host/?token=tok9"
        for offset in 0...(url.utf8.count + 12) {
            let body =
                String(repeating: "x", count: 500 - min(offset, 500)) + " " + url + String(repeating: " y", count: 40)
            let excerpt = redactor.redact(body: Data(body.utf8), contentType: "text/plain", limit: 512)
            #expect(!excerpt.contains("hun") && !excerpt.contains("tok9"), "\(offset): \(excerpt)")
            #expect(excerpt.hasSuffix("… (\(body.utf8.count) bytes)"))
        }
    }

    @Test("secret names are recognised in any case and form, by word; short ones not inside other words")
    func names() {
        let secret = [
            "token", "X-Auth-Token", "Authorization", "PASSWORD", "client_secret", "sign", "Cookie", "Set-Cookie",
            "X-KC-HMAC", "apiKey", "appkey", "pass", "passwd", "pwd", "jwt", "client_assertion", "otp", "pin",
            "cardPin",
            "user[password]", "session", "JSESSIONID", "PHPSESSID", "sid", "refreshtoken", "X-Signature",
        ]
        for name in secret { #expect(redactor.isSecret(name), "\(name)") }
        let visible = [
            "page", "deviceId", "version", "os", "title", "code", "msg", "data", "shipping", "keyword", "author",
            "signup[email]", "passenger", "username", "email", "pinned",
        ]
        for name in visible { #expect(!redactor.isSecret(name), "\(name)") }
        let custom = redactor.adding(["idCard"]).removing(["SESSION"])
        #expect(custom.isSecret("idCard") && custom.isSecret("user_idcard_no") && !custom.isSecret("session"))
        #expect(custom.redact(text: #"{"body":"{\"idCard\":\"1234\"}"}"#) == #"{"body":"{\"idCard\":\"<redacted>\"}"}"#)
        #expect(custom.names == redactor.names.union(["idcard"]).subtracting(["session"]))
    }

    @Test("nesting past the deepest level read hides the value whole")
    func deepNesting() throws {
        var value = #"{"token":"CANARY42"}"#
        for _ in 0..<12 {
            value = String(decoding: try JSONSerialization.data(withJSONObject: ["v": value]), as: UTF8.self)
        }
        let redacted = redactor.redact(text: value)
        #expect(!redacted.contains("CANARY42"))
        #expect(redacted.contains("<redacted>"))
    }

    @Test("input past the limit is left out and its size noted")
    func inputLimit() async {
        let text = String(repeating: "x", count: Redactor.inputLimit + 4_096)
        let redactor = self.redactor
        let (redacted, short) = await offThePool {
            (redactor.redact(text: text), redactor.redact(text: text, limit: 100))
        }
        #expect(redacted.hasSuffix("… (\(text.utf8.count) bytes)"))
        #expect(redacted.utf8.count < Redactor.inputLimit + 32)
        #expect(short.hasPrefix("xxxx") && short.hasSuffix("… (\(text.count) characters)"))
    }
}
