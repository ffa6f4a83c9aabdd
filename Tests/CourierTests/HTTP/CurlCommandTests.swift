import Courier
import CourierTesting
import Foundation
import Testing

/// `HTTPRequest.curlCommand(redactor:)`: run by the `curl` command line tool, it sends what
/// Courier sent, and it never shows a secret.
@Suite struct CurlCommandTests {
    /// Sends `endpoint` through a client that logs curl commands, then runs the logged command
    /// with `sh -c`, and returns what the server received each time.
    static func sentTwice<Response>(_ endpoint: Endpoint<Response>, headers: HTTPHeaders = [:]) async throws
        -> (courier: LoopbackServer.Request, curl: LoopbackServer.Request, command: String)
    {
        let sink = CapturingSink()
        let backend = try Backend {
            $0.interceptors = [.headers(headers), .logging(sink: sink, includesCurlCommands: true)]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/echo") { _ in .json(#"{"code":0}"#) }
        _ = try? await backend.client.send(endpoint)
        let command = try #require(sink.all.first { $0.summary == "  curl:" }).details
        _ = try Subprocess.run("/bin/sh", ["-c", command + " --silent --output /dev/null"])
        let requests = backend.server.requests
        try #require(requests.count == 2)
        return (requests[0], requests[1], command)
    }

    @Test(
        "curl sends the same method, target, body and headers",
        arguments: ["GET", "POST form", "PUT JSON", "HEAD", "DELETE bytes"])
    func sameRequest(kind: String) async throws {
        let endpoint: Endpoint<HTTPResponse> =
            switch kind {
            case "GET": .get("echo", query: ["q": "tea & cake", "it's": "a'b"], decoding: .response)
            case "POST form": .post("echo", body: .form(["title": "Tea 'n' cake", "n": "1"]), decoding: .response)
            case "PUT JSON": .put("echo", body: .json(["name": "Ann \"A\" O'Brien"]), decoding: .response)
            case "HEAD": Endpoint(method: .head, path: "echo", decoding: .response)
            default:
                .delete(
                    "echo", body: .data(Data("line 1\nline 2\n".utf8), contentType: "text/plain"), decoding: .response)
            }
        let (courier, curl, command) = try await Self.sentTwice(endpoint, headers: ["X-Trace": "a 'quoted' value"])
        #expect(curl.method == courier.method, "\(command)")
        #expect(curl.target == courier.target, "\(command)")
        #expect(curl.body == courier.body, "\(command)")
        #expect(curl.headers["Content-Type"] == courier.headers["Content-Type"], "\(command)")
        #expect(curl.headers["X-Trace"] == "a 'quoted' value", "\(command)")
    }

    @Test("curl sends the same multipart fields and files")
    func sameMultipart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("notes 'v1'.txt")
        try Data("from disk".utf8).write(to: file)
        var form = MultipartForm(fields: ["title": "@not a file", "note": "<not a file either"])
        form.append(name: "upload", fileAt: file)
        let (courier, curl, command) = try await Self.sentTwice(
            Endpoint<HTTPResponse>.post("echo", body: .multipart(form), decoding: .response))
        let sentByCourier = try #require(courier.multipartParts)
        let sentByCurl = try #require(curl.multipartParts, "\(command)")
        #expect(sentByCurl.map(\.name) == sentByCourier.map(\.name), "\(command)")
        #expect(sentByCurl.map(\.content) == sentByCourier.map(\.content), "\(command)")
        #expect(sentByCurl.map(\.filename) == sentByCourier.map(\.filename), "\(command)")
    }

    @Test("no secret reaches the command: token, signature, Authorization, Cookie, passwords, extra keys")
    func noSecrets() async throws {
        var form = MultipartForm(fields: ["password": "PW-SECRET-2", "title": "ok"])
        form.append(name: "avatar", data: Data("img".utf8), filename: "a.png")
        let bodies: [RequestBody] = [
            .form(["password": "PW-SECRET-2", "title": "ok"]),
            .json(["token": "TOKEN-SECRET-3", "idCard": "ID-SECRET"]),
            .multipart(form),
        ]
        for body in bodies {
            let sink = CapturingSink()
            let backend = try Backend {
                $0.session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "TOKEN-SECRET-1")))
                $0.redactor = Redactor.standard.adding(["idCard"])
                $0.interceptors = [
                    .headers(
                        ["Cookie": "sid=COOKIE-SECRET"], computed: { _ in ["Authorization": "Bearer AUTH-SECRET"] }),
                    .commonParameters(["version": "3.2.0", "idCard": "ID-SECRET"]),
                    .signing(.hmacSHA256(secret: Data("k".utf8))),
                    .logging(sink: sink, includesCurlCommands: true),
                ]
            }
            defer { backend.server.stop() }
            backend.server.route("/v1/echo") { _ in .json(#"{"code":0}"#) }
            _ = try await backend.client.send(Endpoint<EmptyResponse>.post("echo?api_key=KEY-SECRET", body: body))
            let command = try #require(sink.all.first { $0.summary == "  curl:" }).details
            #expect(command.hasPrefix("curl --globoff -X 'POST' "))
            for secret in ["SECRET", "k\"", "sid="] { #expect(!command.contains(secret), "\(command)") }
            #expect(command.contains("3.2.0"), "\(command)")
            // The signature, wherever the request carried it (query, form or multipart field).
            let received = try #require(backend.server.requests.first)
            let sign = try #require(
                received.query["sign"] ?? received.form["sign"]
                    ?? received.multipartParts?.first { $0.name == "sign" }?.text)
            #expect(!command.contains(sign), "\(command)")
        }
    }

    @Test("nothing a request holds makes the command read a local file: hostile filenames, types, bodies")
    func noLocalFileIsRead() async throws {
        let secretFile = try TemporaryDirectory()
        defer { secretFile.remove() }
        let local = secretFile.file("local secret")
        try Data("LOCAL-FILE-CONTENT".utf8).write(to: local)
        // Each part on its own: curl sends nothing when one part's file cannot be opened.
        var named = MultipartForm(fields: ["note": "@\(local.path)"])
        named.append(name: "a", data: Data("mem".utf8), filename: local.path)
        var hostile = MultipartForm()
        hostile.append(
            name: "b", data: Data("mem".utf8), filename: "x\\\",@\(local.path);y=",
            contentType: "text/plain,@\(local.path)")
        let real = secretFile.file("real.txt")
        try Data("real".utf8).write(to: real)
        var onDisk = MultipartForm()
        onDisk.append(name: "c", fileAt: real, filename: "x\",@\(local.path);x=\"")
        let bodies: [RequestBody] = [
            .multipart(named), .multipart(hostile), .multipart(onDisk),
            .data(Data("@\(local.path)".utf8), contentType: "text/plain"),
            .form(["q": "@\(local.path)"]),
        ]
        for body in bodies {
            let sink = CapturingSink()
            let backend = try Backend { $0.interceptors = [.logging(sink: sink, includesCurlCommands: true)] }
            defer { backend.server.stop() }
            backend.server.route("/v1/echo") { _ in .json(#"{"code":0}"#) }
            _ = try? await backend.client.send(Endpoint<EmptyResponse>.post("echo", body: body))
            let command = try #require(sink.all.first { $0.summary == "  curl:" }).details
            // curl may fail to open a file named like a part; what matters is what it sends.
            _ = try? Subprocess.run("/bin/sh", ["-c", command + " --silent --output /dev/null"])
            if case .multipart = body {
            } else {
                #expect(backend.server.requests.count == 2, "curl sent the request: \(command)")
            }
            for request in backend.server.requests.dropFirst() {
                #expect(!String(decoding: request.body, as: UTF8.self).contains("LOCAL-FILE-CONTENT"), "\(command)")
            }
        }
    }

    @Test("form names that percent-encode are still redacted by name")
    func encodedFormNames() {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/login")!,
            body: .form(["user[password]": "PW-SECRET", "api key": "KEY-SECRET", "name": "Ann"]))
        let command = request.curlCommand()
        #expect(!command.contains("SECRET"), "\(command)")
        #expect(command.contains("name=Ann"), "\(command)")
    }

    @Test("entries carry a level: failures error, answers of 400 and up warning, details debug")
    func levels() async throws {
        let sink = CapturingSink()
        let backend = try Backend { $0.interceptors = [.logging(sink: sink, includesDetails: true)] }
        defer { backend.server.stop() }
        backend.server.route("/v1/ok") { _ in .json(#"{"code":0}"#) }
        _ = try await backend.client.send(Endpoint<EmptyResponse>.get("ok"))
        _ = try? await backend.client.send(Endpoint<EmptyResponse>.get("missing"))
        // A failure: a port that refuses (bound for the whole test, so no other test's server
        // can take it and get this request).
        let refusing = RefusingPort()
        _ = try? await backend.client.send(Endpoint<EmptyResponse>.get("http://127.0.0.1:\(refusing.port)/ok"))
        let levels = sink.all.map { "\($0.event) \($0.level)" }
        #expect(levels.contains("request info"))
        #expect(levels.contains("response info"))
        #expect(levels.contains("response warning"))
        #expect(levels.contains("detail debug"))
        #expect(levels.contains("failure error"))
        #expect(!levels.contains { $0.hasPrefix("detail") && !$0.hasSuffix("debug") })
    }
}
