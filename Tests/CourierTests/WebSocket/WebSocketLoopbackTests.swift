import Courier
import CourierTesting
import Foundation
import Testing

/// The client against LoopbackServer's WebSocket route, which app tests use too: keep-alive,
/// a reader that falls behind, subprotocols, the close's timeout, and a server that breaks the
/// protocol (a frame cut short, a masked frame, a length past any limit, text that is not
/// UTF-8, a close without a code).
@Suite(.serialized) struct WebSocketLoopbackTests {
    private static func client(_ server: LoopbackServer) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), timeout: .seconds(10) * TestTiming.scale,
                transport: TestTransport.make()))
    }

    private static func next(_ socket: WebSocket) async throws -> WebSocketMessage? {
        var iterator = socket.messages.makeAsyncIterator()
        return try await iterator.next()
    }

    @Test("the route echoes messages, sees the handshake's request, and hears the client's close")
    func echo() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let heard = Recorder<LoopbackServer.WebSocketConnection.Event>()
        server.route("/v1/echo") { _ in
            .webSocket { connection in
                while true {
                    let event = await connection.receive()
                    heard.append(event)
                    guard case .message(let message) = event else { return }
                    connection.send(message)
                }
            }
        }
        let socket = try await Self.client(server).webSocket(.webSocket("echo", headers: ["X-Room": "7"]))
        try await socket.send(.text("hello"))
        #expect(try await Self.next(socket) == .text("hello"))
        try await socket.send(.binary(Data([0, 1, 2])))
        #expect(try await Self.next(socket) == .binary(Data([0, 1, 2])))
        await socket.close(code: 4000, reason: "bye")
        #expect(socket.closeFrame == WebSocketClose(code: 4000, reason: "bye"))
        #expect(await heard.values(count: 3).last == .close(WebSocketClose(code: 4000, reason: "bye")))
        #expect(server.requests.first?.headers["X-Room"] == "7")
        // The transport's own fields, as every request of it carries them.
        #expect(server.requests.first?.headers["User-Agent"]?.contains("Courier") == true)
    }

    @Test("a server that answers no ping is declared dead after two; one that answers stays open")
    func keepAlive() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/silent") { _ in
            .webSocket { connection in
                connection.answersPings = false
                while case .ping = await connection.receive(timeout: .seconds(5)) {}
            }
        }
        server.route("/v1/alive") { _ in
            .webSocket { connection in
                while true {
                    switch await connection.receive(timeout: .seconds(5)) {
                    case .ping: continue
                    case .message(let message): connection.send(message)
                    default: return
                    }
                }
            }
        }
        let client = Self.client(server)
        let options = WebSocketOptions(pingInterval: .milliseconds(100))
        let silent = try await client.webSocket(.webSocket("silent"), options: options)
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkError.self) { try await Self.next(silent) }
        #expect(error?.code == .timedOut)
        #expect(ContinuousClock.now - started < .seconds(3) * TestTiming.scale)

        let alive = try await client.webSocket(.webSocket("alive"), options: options)
        try await Task.sleep(for: .milliseconds(600))
        try await alive.send(.text("still there"))
        #expect(try await Self.next(alive) == .text("still there"))
        await alive.close()
    }

    @Test("a reader that falls behind stops the reading, is not taken for a dead server, and gets every message")
    func slowReader() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/flood") { _ in
            .webSocket { connection in
                for index in 0..<40 { connection.send(.binary(Data(repeating: UInt8(index), count: 65_536))) }
                while true {
                    switch await connection.receive(timeout: .seconds(10)) {
                    case .ping: continue
                    case .message(let message): connection.send(message)
                    default: return
                    }
                }
            }
        }
        let socket = try await Self.client(server).webSocket(
            .webSocket("flood"), options: WebSocketOptions(pingInterval: .milliseconds(100)))
        try await Task.sleep(for: .milliseconds(800))
        for index in 0..<40 {
            #expect(try await Self.next(socket) == .binary(Data(repeating: UInt8(index), count: 65_536)))
        }
        try await socket.send(.text("done"))
        #expect(try await Self.next(socket) == .text("done"))
        await socket.close()
    }

    @Test("messages sent by many tasks at once arrive whole, with the answers to the server's pings between them")
    func concurrentSenders() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (senders, each, size) = (4, 100, 64_000)
        server.route("/v1/count") { _ in
            .webSocket { connection in
                var counts: [UInt8: Int] = [:]
                var pongs = 0
                while counts.values.reduce(0, +) < senders * each {
                    switch await connection.receive(timeout: .seconds(20)) {
                    case .message(.binary(let data)):
                        // Whole, unmixed and in its sender's order: a sender's number, the
                        // message's number, then the sender's number over and over.
                        let sender = data.first ?? 0
                        guard data.count == size, data.dropFirst(2).allSatisfy({ $0 == sender }),
                            Int(data[data.startIndex + 1]) == counts[sender, default: 0]
                        else {
                            _ = connection.send(.text("mixed or out of order"))
                            return
                        }
                        counts[sender, default: 0] += 1
                        for _ in 0..<4 { _ = connection.ping(Data("p\(pongs)".utf8)) }
                    case .pong: pongs += 1
                    case .ping: continue
                    case let other:
                        _ = connection.send(.text("ended by \(other)"))
                        return
                    }
                }
                _ = connection.send(.text("\(counts.count) senders, each \(Set(counts.values)), pongs \(pongs > 0)"))
            }
        }
        let socket = try await Self.client(server).webSocket(.webSocket("count"))
        try await socket.sendNumbered(senders: senders, each: each, size: size)
        #expect(try await Self.next(socket) == .text("\(senders) senders, each [\(each)], pongs true"))
        await socket.close()
    }

    @Test("the subprotocol the server chose is the socket's; one that was not offered fails the handshake")
    func subprotocols() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/chosen") { _ in .webSocket(subprotocol: "prices.v1") { _ in } }
        let client = Self.client(server)
        let socket = try await client.webSocket(.webSocket("chosen", subprotocols: ["prices.v2", "prices.v1"]))
        #expect(socket.subprotocol == "prices.v1")
        #expect(server.requests.first?.headers["Sec-WebSocket-Protocol"] == "prices.v2, prices.v1")
        let error = await #expect(throws: NetworkError.self) {
            try await client.webSocket(.webSocket("chosen", subprotocols: ["chat"]))
        }
        #expect(error?.code == .transport)
    }

    @Test("a close the server never answers returns after the close timeout")
    func closeTimeout() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/deaf") { _ in .webSocket { _ in try? await Task.sleep(for: .seconds(5)) } }
        let socket = try await Self.client(server).webSocket(
            .webSocket("deaf"), options: WebSocketOptions(closeTimeout: .milliseconds(300)))
        let started = ContinuousClock.now
        await socket.close()
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(3) * TestTiming.scale)
        #expect(socket.closeFrame == nil)
    }

    @Test(
        "a server that breaks the protocol fails the connection, answered with the close its fault calls for",
        arguments: WebSocketFault.allCases.filter { $0 != .closeWithoutCode })
    func brokenServer(_ fault: WebSocketFault) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let heard = Recorder<LoopbackServer.WebSocketConnection.Event>()
        server.route("/v1/broken") { _ in
            .webSocket { connection in
                connection.sendRaw(fault.bytes)
                if fault.closeCode != nil { heard.append(await connection.receive()) }
            }
        }
        let socket = try await Self.client(server).webSocket(.webSocket("broken"))
        let error = await #expect(throws: NetworkError.self) { try await Self.next(socket) }
        #expect(error?.code == .transport)
        if let code = fault.closeCode {
            guard case .close(let close) = await heard.values(count: 1).first else {
                Issue.record("the server heard \(heard.values), not a close")
                return
            }
            #expect(close.code == code)
        }
    }

    @Test("a close without a code ends the messages, and is answered without a code")
    func closeWithoutCode() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let heard = Recorder<LoopbackServer.WebSocketConnection.Event>()
        server.route("/v1/quiet") { _ in
            .webSocket { connection in
                connection.sendRaw(WebSocketFault.closeWithoutCode.bytes)
                heard.append(await connection.receive())
            }
        }
        let socket = try await Self.client(server).webSocket(.webSocket("quiet"))
        #expect(try await Self.next(socket) == nil)
        #expect(socket.closeFrame?.code == .noStatus)
        // The route's session has ended once the server closed the connection.
        await socket.close()
        #expect(await heard.values(count: 1) == [.close(WebSocketClose(code: .noStatus))])
    }
}

extension WebSocketLoopbackTests {
    @Test("each handshake is told to the client's observers and kept in its recent traffic")
    func observedAndKept() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/echo") { _ in .webSocket { connection in _ = await connection.receive() } }
        server.route("/v1/gone") { _ in .json(#"{"code":0,"msg":"ok","data":null}"#, status: 404) }
        let log = ObserverLog()
        var configuration = NetworkClient.Configuration(
            baseURL: server.baseURL.appendingPathComponent("v1/"), timeout: .seconds(10) * TestTiming.scale,
            session: Session(
                store: InMemoryTokenStore(credential: Credential(accessToken: "secret-token-7")),
                placement: .header("token")),
            transport: TestTransport.make())
        configuration.observers = [log]
        configuration.keptExchanges = 8
        let client = NetworkClient(configuration: configuration)
        let socket = try await client.webSocket(.webSocket("echo"))
        await socket.close()
        let error = await #expect(throws: NetworkError.self) { try await client.webSocket(.webSocket("gone")) }
        #expect(error?.status == 404)
        #expect(log.timelines.map(\.status) == [101, 404])
        #expect(log.timelines.map(\.attempts.count) == [1, 1])
        #expect(log.timelines.map(\.failure) == [nil, .httpStatus])
        let kept = client.recentTraffic().entries
        #expect(kept.map(\.response.status) == [101, 404])
        #expect(kept.map { URL(string: $0.request.url)?.path } == ["/v1/echo", "/v1/gone"])
        // The handshake carried the token; the archive hides it as it hides any request's.
        #expect(server.requests.first?.headers["token"] == "secret-token-7")
        let archived = String(decoding: client.recentTraffic().jsonData(), as: UTF8.self)
        #expect(archived.contains("token"))
        #expect(!archived.contains("secret-token-7"))
    }

    @Test("every way a socket ends lets the client forget it")
    func nothingKept() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/echo") { _ in
            .webSocket { connection in
                while case .message(let message) = await connection.receive() {
                    if message == .text("drop") { return }
                    connection.send(message)
                }
            }
        }
        let client = Self.client(server)
        for round in 0..<20 {
            let socket = try await client.webSocket(.webSocket("echo"))
            var messages = socket.messages.makeAsyncIterator()
            switch round % 4 {
            case 0:
                try await socket.send(.text("hi"))
                _ = try await messages.next()
                await socket.close()
            case 1:
                try await socket.send(.text("drop"))
                _ = try? await messages.next()
            case 2:
                let reading = Task { [socket] in
                    var messages = socket.messages.makeAsyncIterator()
                    return try await messages.next()
                }
                reading.cancel()
                _ = try? await reading.value
            default:
                break  // released while open
            }
        }
        // Each socket is gone: the client keeps none for its session. (The connections' own
        // release is the soak's to check, by its descriptors: the poller is the process's.)
        for _ in 0..<200 where client.openWebSocketCount > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(client.openWebSocketCount == 0)
    }
}

extension WebSocket {
    /// Sends `each` binary messages of `size` bytes from each of `senders` tasks at once: a
    /// message's first byte names its sender, its second its number among the sender's, and the
    /// rest repeat the first, so a server can tell that each came whole and in order.
    func sendNumbered(senders: Int, each: Int, size: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in 0..<each {
                        var message = Data(repeating: UInt8(sender), count: size)
                        message[1] = UInt8(index)
                        try await self.send(.binary(message))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// Values appended from a route's session, read by the test.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Value] = []

    func append(_ value: Value) { lock.withLock { stored.append(value) } }

    var values: [Value] { lock.withLock { stored } }

    /// The values once there are `count` of them, or after five seconds, whichever is first: a
    /// route's session records what it heard a moment after the client is done.
    func values(count: Int) async -> [Value] {
        for _ in 0..<500 where values.count < count { try? await Task.sleep(for: .milliseconds(10)) }
        return values
    }
}

extension WebSocketFault: CustomTestStringConvertible {
    /// The case's name, in the test's report.
    public var testDescription: String { rawValue }

    /// The close the client answers with; `nil` when it cannot (the connection is gone).
    var closeCode: WebSocketCloseCode? {
        switch self {
        case .frameCutMidHeader: nil
        case .maskedFrame, .oversizedLength: .protocolError
        case .invalidText: .invalidData
        case .closeWithoutCode: .noStatus
        }
    }
}
