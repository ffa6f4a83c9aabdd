import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Secrets never reach a recording or an exported archive, and hiding them never breaks a
/// replay; values that change on every call do not break it either.
@Suite struct RecordingRedactionTests {
    /// Secrets planted in every place a request and its answer can carry them.
    static let canaries = [
        "CANARY-TOKEN-7f3a", "CANARY-QUERY-19bd", "CANARY-FORM-55e1", "CANARY-JSONREQ-a0c2",
        "CANARY-JSONRESP-3b77", "CANARY-COOKIE-8d21", "CANARY-AUTH-c4e9", "CANARY-MULTIPART-6f10",
        "CANARY-USERINFO-2a6d", "CANARY-REFRESH-91fe", "CANARY-HEADERURL-b5d3",
    ]

    /// A server that answers every route with a token in its body and a cookie.
    private func server() throws -> LoopbackServer {
        let server = try LoopbackServer()
        for path in ["/v1/profile", "/v1/login", "/v1/notes", "/v1/avatar"] {
            server.route(path) { _ in
                var response = LoopbackServer.Response.json(
                    #"{"code":0,"msg":"ok","data":{"id":1,"token":"CANARY-JSONRESP-3b77","#
                        + #""nested":{"refresh_token":"CANARY-REFRESH-91fe"}}}"#)
                response.headers.append(name: "Set-Cookie", value: "sid=CANARY-COOKIE-8d21; HttpOnly")
                return response
            }
        }
        return server
    }

    /// Sends one request of each kind, every canary in its place.
    private func sendAll(_ client: NetworkClient, baseURL: URL) async throws {
        var form = MultipartForm()
        form.append(name: "password", value: "CANARY-MULTIPART-6f10")
        // A part that is not UTF-8 makes the whole body bytes: its secrets must go all the same.
        form.append(
            name: "avatar", data: Data([0x89, 0x50, 0x4E, 0x47, 0xFF, 0xD8, 0x00]), filename: "a.png",
            contentType: "image/png")
        var userInfo = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        userInfo.user = "me"
        userInfo.password = "CANARY-USERINFO-2a6d"
        userInfo.path = "/v1/profile"
        let endpoints: [Endpoint<Data>] = [
            .get(
                "profile", query: ["api_key": "CANARY-QUERY-19bd", "page": "1"],
                headers: [
                    "Authorization": "Bearer CANARY-AUTH-c4e9",
                    "Referer": "https://me:CANARY-HEADERURL-b5d3@example.com/",
                ], decoding: .data),
            .post("login", body: .form(["user": "me", "password": "CANARY-FORM-55e1"]), decoding: .data),
            .post("notes", body: .json(["note": ["secret": "CANARY-JSONREQ-a0c2", "text": "hi"]]), decoding: .data),
            .post("avatar", body: .multipart(form), decoding: .data),
            .get(userInfo.url!.absoluteString, decoding: .data),
        ]
        for endpoint in endpoints { _ = try await client.send(endpoint) }
    }

    private func signedIn() async throws -> Session {
        // The token goes in a header whose name says nothing secret: its value is known to be.
        let session = Session(placement: .header("X-User"))
        try await session.logIn(Credential(accessToken: "CANARY-TOKEN-7f3a"))
        return session
    }

    @Test("no canary secret reaches a recording, and the recording still replays every request")
    func canariesInRecording() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try server()
        let signing = SigningInterceptor(.hmacSHA256(secret: Data("k".utf8)), placement: .headers())
        let session = try await signedIn()
        let live = recordingClient(server.baseURL, try recording.recorder()) {
            $0.session = session
            $0.interceptors = [signing]
        }
        try await sendAll(live, baseURL: server.baseURL)
        server.stop()
        // The server did get every secret: the recording is what hides them.
        let received = server.requests.map { "\($0.target) \($0.headers) \(String(decoding: $0.body, as: UTF8.self))" }
        #expect(received.joined().contains("CANARY-FORM-55e1"))
        let text = try recording.text()
        for canary in Self.canaries { #expect(!text.contains(canary), "\(canary) is in the recording") }
        // Nor in a body kept as base64 (the multipart form with bytes that are not UTF-8).
        let bodies = try recording.archive().entries.flatMap {
            [$0.request.postData?.bytes, $0.response.content.bytes]
        }
        #expect(try recording.archive().entries.contains { $0.request.postData?.encoding == "base64" })
        for case let body? in bodies {
            for canary in Self.canaries { #expect(body.range(of: Data(canary.utf8)) == nil, "\(canary) is in a body") }
        }
        // Nor the signature the signing layer added, under a header name that says nothing secret.
        let signatures = server.requests.compactMap { $0.headers["X-KC-HMAC"] }
        #expect(signatures.count == 5)
        for signature in signatures { #expect(!text.contains(signature)) }
        #expect(text.contains(Redactor.placeholder))

        let replaySession = try await signedIn()
        let (replayer, spy) = try recording.replayer()
        let offline = recordingClient(server.baseURL, replayer) {
            $0.session = replaySession
            $0.interceptors = [signing]
        }
        try await sendAll(offline, baseURL: server.baseURL)
        #expect(replayer.replayedCount == 5)
        #expect(spy.requests.isEmpty)
    }

    @Test("a known secret is hidden in every form it takes: percent-encoded in either case, JSON-escaped")
    func encodedForms() async throws {
        let token = "ab/cd+ef=="
        let server = try LoopbackServer()
        server.route("/v1/echo") { request in
            // Echoed as a JSON string (its `/` escaped) and in a redirect-like header, lower-case escapes.
            let echoed = (request.query["u"] ?? "").replacingOccurrences(of: "/", with: "\\/")
            var response = LoopbackServer.Response.json(#"{"code":0,"msg":"ok","data":{"echo":"\#(echoed)"}}"#)
            response.headers.append(name: "X-Next", value: "https://example.com/next?ref=ab%2fcd%2bef%3d%3d")
            return response
        }
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let session = Session(placement: .parameter("u"))
        try await session.logIn(Credential(accessToken: token))
        let live = recordingClient(server.baseURL, try recording.recorder()) { $0.session = session }
        let echoed: [String: String] = try await live.send(.get("echo"))
        server.stop()
        #expect(echoed["echo"] == token, "the server saw the token")
        // Read back, so a form escaped once more in the file's own JSON is seen as it is.
        let entry = try #require(try recording.archive().entries.first)
        let fields =
            [entry.request.url, entry.response.content.text ?? "", entry.response.redirectURL]
            + entry.request.queryString.map(\.value) + entry.response.headers.map(\.value)
        for field in fields {
            for form in ["ab/cd", "ab\\/cd", "ab%2Fcd", "ab%2fcd"] {
                #expect(!field.contains(form), "\(form) is in \(field)")
            }
        }
        #expect(entry.response.content.text?.contains(#""echo":"<redacted>""#) == true)
    }

    @Test("a short token is hidden where it is a whole value: a query pair in the URL, a header")
    func shortToken() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/me") { _ in .envelope(data: "me") }
        let session = Session(placement: .parameter("u"))
        try await session.logIn(Credential(accessToken: "k9q"))
        let live = recordingClient(server.baseURL, try recording.recorder()) { $0.session = session }
        let _: String = try await live.send(.get("me", query: ["page": "1"]))
        server.stop()
        let entry = try #require(try recording.archive().entries.first)
        #expect(server.requests.first?.query["u"] == "k9q")
        #expect(!entry.request.url.contains("u=k9q"), "\(entry.request.url)")
        #expect(entry.request.url.contains("page=1"))
        #expect(entry.request.queryString.first { $0.name == "u" }?.value == Redactor.placeholder)
    }

    @Test("a token is hidden in the answer that gave it, under any key, and a text body of a binary type is read")
    func tokenInItsOwnAnswer() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/login") { _ in .envelope(data: ["access": "CANARY-GIVEN-4411aa"]) }
        server.route("/v1/me") { _ in .envelope(data: "me") }
        server.route("/v1/blob") { _ in
            .init(
                status: 200, headers: ["Content-Type": "application/octet-stream"],
                body: Data(#"{"access_token":"CANARY-BLOB-0f0f0f"}"#.utf8))
        }
        let session = Session(placement: .header("X-User"))
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "v1/", relativeTo: server.baseURL)!.absoluteURL, session: session,
            transport: try recording.recorder())
        configuration.keptExchanges = 10
        let client = NetworkClient(configuration: configuration)
        let given: [String: String] = try await client.send(.post("login").skipping(.token))
        try await session.logIn(Credential(accessToken: try #require(given["access"])))
        let _: String = try await client.send(.get("me"))
        let _: Data = try await client.send(.get("blob", decoding: .data))
        server.stop()
        for text in [try recording.text(), String(decoding: client.recentTraffic().jsonData(), as: UTF8.self)] {
            #expect(!text.contains("CANARY-GIVEN"), "the answer that gave the token hides it")
            #expect(!text.contains("CANARY-BLOB"), "a JSON body sent as bytes is read for names")
        }
    }

    @Test("no canary secret reaches a client's exported archive")
    func canariesInExport() async throws {
        let server = try server()
        defer { server.stop() }
        let session = try await signedIn()
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "v1/", relativeTo: server.baseURL)!.absoluteURL, session: session,
            interceptors: [SigningInterceptor(.hmacSHA256(secret: Data("k".utf8)), placement: .headers())],
            transport: TestTransport.make())
        configuration.keptExchanges = 10
        let client = NetworkClient(configuration: configuration)
        try await sendAll(client, baseURL: server.baseURL)
        let archive = client.recentTraffic()
        #expect(archive.entries.count == 5)
        let text = String(decoding: archive.jsonData(), as: UTF8.self)
        for canary in Self.canaries where canary != "CANARY-MULTIPART-6f10" {
            #expect(!text.contains(canary), "\(canary) is in the export")
        }
        // A multipart form is not read again for an export: its bytes are not there at all.
        #expect(!text.contains("CANARY-MULTIPART-6f10"))
        for signature in server.requests.compactMap({ $0.headers["X-KC-HMAC"] }) { #expect(!text.contains(signature)) }
    }

    @Test("a replay matches with a new nonce, timestamp and signature, and with declared volatile parts")
    func volatileParts() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/ping") { _ in .envelope(data: "pong") }
        let clock = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        let signing = SigningInterceptor(.hmacSHA256(secret: Data("k".utf8)), now: { clock.withLock { $0 } })
        let ping = { (id: String) -> Endpoint<String> in
            .post("ping", query: ["requestId": id], body: .json(["at": id, "keep": "same"]))
        }
        let volatile = VolatileParts(namesByPath: ["/v1/ping": ["requestId", "at"]])
        let live = recordingClient(server.baseURL, try recording.recorder()) { $0.interceptors = [signing] }
        _ = try await live.send(ping("first"))
        server.stop()
        let recorded = try #require(server.requests.first)

        clock.withLock { $0 += 3600 }
        let offline = recordingClient(server.baseURL, try recording.replayer(volatile: volatile).0) {
            $0.interceptors = [signing]
        }
        #expect(try await offline.send(ping("second")) == "pong")

        // Without the declaration the request ID differs, and the diff says where.
        let strict = recordingClient(server.baseURL, try recording.replayer().0) { $0.interceptors = [signing] }
        let error = await networkError { _ = try await strict.send(ping("third")) }
        #expect(error?.message.contains("query: sent only requestId=third, recorded only requestId=first") == true)
        // The signing layer's own parts never show in a diff: they changed, and were left out.
        #expect(error?.message.contains("nonce") == false)
        #expect(recorded.query["timestamp"] == "1800000000")
    }

    @Test("a multipart upload from a file is matched by its bytes, whatever its boundary")
    func multipartFromFile() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        try FileManager.default.createDirectory(at: recording.folder, withIntermediateDirectories: true)
        let photo = recording.folder.appendingPathComponent("photo.bin")
        try Data((0..<4096).map { UInt8($0 % 251) }).write(to: photo)
        let server = try LoopbackServer()
        server.route("/v1/upload") { request in .envelope(data: request.body.count) }
        let upload = { () -> Endpoint<Int> in
            var form = MultipartForm()
            form.append(name: "title", value: "holiday")
            form.append(name: "photo", fileAt: photo, contentType: "application/octet-stream")
            return .post("upload", body: .multipart(form))
        }
        let live = recordingClient(server.baseURL, try recording.recorder())
        let size = try await live.send(upload())
        server.stop()
        #expect(size > 4096)
        let entry = try #require(try recording.archive().entries.first)
        #expect(entry.request.postData?.encoding == "base64", "bytes that are not UTF-8 are kept in base64")
        #expect(entry.request.bodySize == size, "the recorded body is the one that was sent")

        let offline = recordingClient(server.baseURL, try recording.replayer().0)
        #expect(try await offline.send(upload()) == size, "a new form has a new boundary, and still matches")
        try Data((0..<4096).map { UInt8($0 % 13) }).write(to: photo)
        let error = await networkError { _ = try await offline.send(upload()) }
        #expect(error?.message.contains("body: sent") == true, "another file's bytes do not match")
    }
}
