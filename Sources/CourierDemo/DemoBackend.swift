import Courier
import CourierTesting
import Foundation

/// An order, as the demo backend serves it.
struct Order: Codable, Sendable {
    let id: Int
    let title: String
    let price: Double
}

/// What a client sends to create an order.
struct NewOrder: Codable, Sendable {
    let title: String
    let price: Double
}

/// The embedded backend the walkthrough talks to: an app backend in the classic style, on a
/// `LoopbackServer` at 127.0.0.1 with a port the system picks.
enum DemoBackend {
    static func start() throws -> LoopbackServer {
        let server = try LoopbackServer()
        let catalogue = (1...45).map { Order(id: $0, title: "Order #\($0)", price: Double($0) * 1.5) }

        server.route("/api/v1/orders", method: .get) { request in
            let page = max(Int(request.query["page"] ?? "1") ?? 1, 1)
            let slice = catalogue.dropFirst((page - 1) * 20).prefix(20)
            return .envelope(data: Array(slice))
        }
        server.route("/api/v1/orders", method: .post) { request in
            let new = try request.json(NewOrder.self)
            return .envelope(data: Order(id: 46, title: new.title, price: new.price))
        }
        server.route("/api/v1/search") { request in
            // Echo what arrived, so the walkthrough can show the encoding round trip.
            .envelope(data: ["raw": request.rawQuery, "q": request.query["q"] ?? ""])
        }
        server.route("/api/v1/profile") { _ in
            .json(#"{"code":99,"msg":"Not logged in","data":null}"#)
        }
        server.route("/api/v1/legacy") { _ in
            .json(
                #"{"errorCode":4031,"errorDescription":"Account frozen","content":"Please call support"}"#, status: 403)
        }
        server.route("/api/v1/report") { _ in
            LoopbackServer.Response.json(#"{"code":0,"msg":"ok","data":"\#(String(repeating: "x", count: 2000))"}"#)
                .with(.drip(bytes: 1, every: .milliseconds(20)))
        }
        server.route("/api/v1/slow") { _ in
            LoopbackServer.Response.json(#"{"code":0,"data":"late"}"#).delayed(by: .seconds(30))
        }
        addAppBackendRoutes(to: server)
        addTransferRoutes(to: server)
        // A chat answer as Server-Sent Events, a word per event. The first connection drops after
        // three words; a reconnection resumes after the `Last-Event-ID` it sends.
        let chatConnections = DownloadCount()
        server.route("/api/v1/chat") { request in
            let first = chatConnections.next() == 1
            let after = Int(request.headers["Last-Event-ID"] ?? "") ?? 0
            return .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                writer.send(": connected\n\n")
                for (index, word) in chatAnswer.enumerated().dropFirst(after) {
                    if first, index == 3 { return writer.drop() }
                    writer.event(#"{"text":"\#(word) "}"#, id: String(index + 1), retry: 50)
                    try? await Task.sleep(for: .milliseconds(40))
                }
                writer.event("[DONE]", type: "done")
            }
        }
        return server
    }

    /// The file behind `files/report.bin`: 16 MB of patterned bytes.
    static let reportContent = Data(
        (0..<16_000_000 as Range<Int>).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) })

    /// An upload endpoint that parses multipart bodies, and a download that breaks half-way the
    /// first time and honours `Range` with `If-Range` after that.
    private static func addTransferRoutes(to server: LoopbackServer) {
        server.route("/api/v1/media", method: .post) { request in
            let parts = request.multipartParts ?? []
            return .envelope(data: parts.map { "\($0.name ?? "?")=\($0.filename ?? $0.text) (\($0.content.count) B)" })
        }
        let served = DownloadCount()
        server.route("/api/v1/files/report.bin") { request in
            let content = reportContent
            var headers: HTTPHeaders = [
                "Content-Type": "application/octet-stream", "ETag": "\"r1\"", "Accept-Ranges": "bytes",
            ]
            let pace = LoopbackServer.Fault.drip(bytes: 256 << 10, every: .milliseconds(15))
            if let range = request.headers["Range"], request.headers["If-Range"] == "\"r1\"",
                let start = Int(range.dropFirst("bytes=".count).dropLast()), start < content.count
            {
                headers["Content-Range"] = "bytes \(start)-\(content.count - 1)/\(content.count)"
                return LoopbackServer.Response(
                    status: 206, headers: headers, body: content.subdata(in: start..<content.count)
                )
                .with(pace)
            }
            let full = LoopbackServer.Response(status: 200, headers: headers, body: content)
            return served.next() == 1 ? full.with(.closeMidBody(afterBytes: content.count / 2)) : full.with(pace)
        }
    }

    /// Routes of the "app backend" part: a login endpoint, a profile that wants the token of the
    /// current login and a valid signature (code 99 once the server forgot the session), and a
    /// switch that makes the server forget it.
    private static func addAppBackendRoutes(to server: LoopbackServer) {
        let state = BackendState()
        server.route("/api/v1/login", method: .post) { request in
            guard request.form["password"] == "demo-password" else {
                return .json(#"{"code":401,"msg":"Wrong password"}"#)
            }
            return .envelope(data: ["token": state.logIn(), "userID": "ann"])
        }
        server.route("/api/v1/forget-session", method: .post) { _ in
            state.forget()
            return .envelope(data: "forgotten")
        }
        server.route("/api/v1/me") { request in
            guard let token = request.headers["token"] else { return .init(status: 401) }
            guard token == state.currentToken else { return .json(#"{"code":99,"msg":"Not logged in"}"#) }
            let verified = verifySignature(of: request)
            return .envelope(data: ["name": "Ann", "signature": verified ? "verified by the server" : "INVALID"])
        }
    }

    /// Checks the `sign` parameter the way a backend would, from the request as received: the
    /// version 2 canonical form covers the host the client addressed, so it is taken from the
    /// `Host` header (a backend behind a proxy would use its public host name instead).
    private static func verifySignature(of request: LoopbackServer.Request) -> Bool {
        guard let host = request.headers["Host"], let url = URL(string: "http://" + host + request.path) else {
            return false
        }
        let query = request.query
        let signed = HTTPRequest(method: request.method, url: url, query: query)
        let canonical = CanonicalRequest(
            signed, version: .v2, excluding: "sign", timestamp: query["timestamp"] ?? "", nonce: query["nonce"] ?? "")
        let expected = HMAC<SHA256>.authenticationCode(for: Data(canonical.string.utf8), key: signingKey).hexString
        // Compared in constant time, as a backend must, so the time taken tells nothing.
        let sent = Array((query["sign"] ?? "").utf8)
        let wanted = Array(expected.utf8)
        guard sent.count == wanted.count else { return false }
        return zip(sent, wanted).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The key the demo client and backend share.
    static let signingKey = Data("demo-signing-key".utf8)
}

/// The demo backend's session state: the token of the current login, if the server still
/// knows it. `@unchecked Sendable`: guarded by `lock`.
private final class BackendState: @unchecked Sendable {
    private let lock = NSLock()
    private var logins = 0
    private var current: String?

    var currentToken: String? { lock.withLock { current } }

    /// A new login's token.
    func logIn() -> String {
        lock.withLock {
            logins += 1
            current = "tok-\(logins)"
            return "tok-\(logins)"
        }
    }

    func forget() { lock.withLock { current = nil } }
}

/// The demo chat's answer, word by word.
let chatAnswer = "Courier streams this answer word by word and picks up where it left off".split(separator: " ")

/// Counts the downloads served (and the chat's connections). `@unchecked Sendable`: `count` is guarded by `lock`.
private final class DownloadCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
