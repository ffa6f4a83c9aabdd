import Courier
import CourierTesting
import Foundation
import Testing

/// `client.webSocket(_:)` against the `websockets` Python library as a server
/// (``WebSocketServerPeer``): the handshake through the client's layers, messages both ways,
/// pings, every way a connection ends, and the session's end closing it. One test at a time:
/// each starts a Python server, and eight starting at once would load the machine the other
/// suites' timings share.
@Suite(.serialized, .enabled(if: WebSocketPeer.available, "needs python3-websockets (.ci/run installs it)"))
struct WebSocketClientTests {
    /// A client of `server` whose session holds `token` (refreshed to `fresh` on business code
    /// 401001), with common parameters, a header and a signature on every request.
    private static func client(_ server: WebSocketServerPeer, token: String = "t1", refreshes: Counter = Counter())
        -> NetworkClient
    {
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: token)), placement: .header("token"),
            refreshCodes: [401_001],
            refresh: { _ in
                _ = refreshes.increment()
                return Credential(accessToken: "fresh")
            })
        return NetworkClient(
            configuration: .init(
                baseURL: server.baseURL, timeout: .seconds(20) * TestTiming.scale, session: session,
                interceptors: [
                    .commonParameters(["version": "2.1", "os": "linux"]), .headers(["X-App": "courier-tests"]),
                    .signing(.hmacSHA256(secret: Data("key".utf8))),
                ],
                transport: TestTransport.make()))
    }

    /// What the server received in the handshake.
    private struct Handshake: Decodable {
        let path: String
        let headers: [[String]]

        func field(_ name: String) -> String? {
            headers.first { $0.first?.lowercased() == name.lowercased() }?.last
        }
    }

    private static func next(_ socket: WebSocket) async throws -> WebSocketMessage? {
        var iterator = socket.messages.makeAsyncIterator()
        return try await iterator.next()
    }

    private static func handshake(_ socket: WebSocket) async throws -> Handshake {
        try await socket.send(.text("handshake"))
        guard case .text(let json) = try await next(socket) else { throw Subprocess.Failed(description: "no JSON") }
        return try JSONDecoder().decode(Handshake.self, from: Data(json.utf8))
    }

    /// The codes and reasons of the connections the server saw closed, once there are `count`
    /// (the server hears of a close a moment after the client is done with it).
    private static func closes(_ client: NetworkClient, count: Int) async throws -> [[String]] {
        let witness = try await client.webSocket(.webSocket("echo"))
        defer { Task { await witness.close() } }
        var seen: [[String]] = []
        for _ in 0..<100 {
            try await witness.send(.text("closes"))
            guard case .text(let json) = try await next(witness) else { break }
            let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[Any]] ?? []
            seen = list.map { $0.map { "\($0)" } }
            if seen.count >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return seen
    }

    @Test("the handshake carries the token, the common parameters, the headers and a signature")
    func handshakeThroughLayers() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let socket = try await Self.client(server).webSocket(.webSocket("echo", query: ["room": "7"]))
        let seen = try await Self.handshake(socket)
        #expect(seen.field("token") == "t1")
        #expect(seen.field("X-App") == "courier-tests")
        #expect(seen.path.hasPrefix("/v1/echo?"))
        #expect(seen.path.contains("room=7"))
        #expect(seen.path.contains("version=2.1"))
        #expect(seen.path.contains("os=linux"))
        #expect(seen.path.contains("sign="))
        #expect(seen.field("Sec-WebSocket-Version") == "13")
        #expect(seen.field("Host") == "127.0.0.1:\(server.port)")
        #expect(socket.response.status == 101)
        await socket.close()
    }

    @Test("text and binary messages from 0 bytes to 16 MiB come back as they were sent")
    func echo() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let socket = try await Self.client(server).webSocket(.webSocket("echo"))
        var generator = SystemRandomNumberGenerator()
        let block = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for size in [0, 1, 125, 126, 65_535, 65_536, 1 << 20, 16 << 20] {
            var bytes = Data(capacity: size)
            while bytes.count < size { bytes.append(contentsOf: block.prefix(size - bytes.count)) }
            try await socket.send(.binary(bytes))
            #expect(try await Self.next(socket) == .binary(bytes), "binary of \(size) bytes")
        }
        for text in ["", "hello", "price: 5€ ✓", String(repeating: "é", count: 70_000)] {
            try await socket.send(.text(text))
            #expect(try await Self.next(socket) == .text(text), "text of \(text.utf8.count) bytes")
        }
        try await socket.ping()
        await socket.close()
    }

    @Test("a handshake refused with a business code that asks for a refresh is made again with the new token")
    func refreshOnHandshake() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let refreshes = Counter()
        let socket = try await Self.client(server, token: "stale", refreshes: refreshes).webSocket(.webSocket("fresh"))
        #expect(try await Self.handshake(socket).field("token") == "fresh")
        #expect(refreshes.current == 1)
        await socket.close()
    }

    @Test("a handshake answered without switching protocols throws the answer's error")
    func refused() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let client = Self.client(server)
        let forbidden = await #expect(throws: NetworkError.self) { try await client.webSocket(.webSocket("refused")) }
        #expect(forbidden?.code == .httpStatus)
        #expect(forbidden?.status == 403)
        let plain = await #expect(throws: NetworkError.self) { try await client.webSocket(.webSocket("plain")) }
        #expect(plain?.code == .transport)
        #expect(plain?.status == 200)
    }

    @Test("a close from the client carries its code and reason; one from the server ends the messages")
    func closeCodes() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let client = Self.client(server)
        let first = try await client.webSocket(.webSocket("echo"))
        await first.close(code: 4001, reason: "left the room")
        #expect(first.closeFrame == WebSocketClose(code: 4001, reason: "left the room"))

        let second = try await client.webSocket(.webSocket("echo"))
        try await second.send(.text("closes"))
        #expect(try await Self.next(second) == .text(#"[[4001, "left the room"]]"#))
        try await second.send(.text("close:4002:done here"))
        #expect(try await Self.next(second) == nil)
        #expect(second.closeFrame == WebSocketClose(code: 4002, reason: "done here"))
        let late = await #expect(throws: NetworkError.self) { try await second.send(.text("late")) }
        #expect(late?.code == .transport)
    }

    @Test("a connection the server drops without a close throws from the messages")
    func dropped() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let socket = try await Self.client(server).webSocket(.webSocket("echo"))
        try await socket.send(.text("drop"))
        let error = await #expect(throws: NetworkError.self) { try await Self.next(socket) }
        #expect(error?.code == .transport)
        #expect(socket.closeFrame == nil)
    }

    @Test("a message past the limit closes the connection with 1009 and throws responseTooLarge")
    func tooLarge() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let client = Self.client(server)
        let socket = try await client.webSocket(.webSocket("echo"), options: WebSocketOptions(maximumMessageSize: 1000))
        try await socket.send(.text("send:1000"))
        #expect(try await Self.next(socket) == .binary(Data(count: 1000)))
        try await socket.send(.text("send:1001"))
        let error = await #expect(throws: NetworkError.self) { try await Self.next(socket) }
        #expect(error?.code == .responseTooLarge)
        let closes = try await Self.closes(client, count: 1)
        #expect(closes == [["1009", "a frame carries 1001 bytes, more than the limit of 1000"]])
    }

    @Test("a logout, cancelAll() and a cancelled reader each close the connection")
    func sessionEnds() async throws {
        let server = try await WebSocketServerPeer()
        defer { server.stop() }
        let client = Self.client(server)
        let session = try #require(client.configuration.session)

        let cancelled = try await client.webSocket(.webSocket("echo"))
        client.cancelAll()
        let afterCancel = await #expect(throws: NetworkError.self) { try await Self.next(cancelled) }
        #expect(afterCancel?.code == .cancelled)

        let reader = try await client.webSocket(.webSocket("echo"))
        let reading = Task { try await Self.next(reader) }
        try await Task.sleep(for: .milliseconds(100))
        reading.cancel()
        let afterReader = await #expect(throws: NetworkError.self) { try await reading.value }
        #expect(afterReader?.code == .cancelled)

        let loggedIn = try await client.webSocket(.webSocket("echo"))
        try await session.logOut()
        let afterLogout = await #expect(throws: NetworkError.self) { try await Self.next(loggedIn) }
        #expect(afterLogout?.code == .cancelled)

        // The server saw each close as 1001, going away.
        let closes = try await Self.closes(Self.client(server), count: 3)
        #expect(closes == Array(repeating: ["1001", ""], count: 3))
    }
}
