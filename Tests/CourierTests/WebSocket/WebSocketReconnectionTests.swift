import Courier
import CourierTesting
import Foundation
import Testing

/// A WebSocket whose connection fails opens again through the layers, as its options say, and
/// never after `cancelAll()`, a logout or a refusal.
@Suite struct WebSocketReconnectionTests {
    /// A client whose every handshake carries `X-Attempt: n` from a layer, and a session.
    private static func client(_ server: LoopbackServer, attempts: Counter) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), timeout: .seconds(10) * TestTiming.scale,
                session: Session(store: InMemoryTokenStore(credential: Credential(accessToken: "t1"))),
                interceptors: [.headers(computed: { _ in ["X-Attempt": "\(attempts.increment())"] })],
                transport: TestTransport.make()))
    }

    private static let quickly = WebSocketOptions(
        reconnection: .init(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(50), maximumAttempts: 3))

    private static func next(_ socket: WebSocket) async throws -> WebSocketMessage? {
        var iterator = socket.messages.makeAsyncIterator()
        return try await iterator.next()
    }

    /// A route that drops its first `drops` connections at once and echoes on the others.
    private static func route(_ server: LoopbackServer, drops: Int) {
        let connections = Counter()
        server.route("/v1/live") { _ in
            let number = connections.increment()
            return .webSocket { connection in
                guard number > drops else { return }
                connection.send(.text("connection \(number)"))
                while case .message(let message) = await connection.receive() { connection.send(message) }
            }
        }
    }

    @Test("a dropped connection opens again through the layers, and the socket says so")
    func reconnects() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        Self.route(server, drops: 2)
        let attempts = Counter()
        let socket = try await Self.client(server, attempts: attempts).webSocket(
            .webSocket("live"), options: Self.quickly)
        var numbers = socket.reconnections().makeAsyncIterator()
        #expect(await numbers.next() == 1)
        #expect(try await Self.next(socket) == .text("connection 3"))
        // The second connection opened, then dropped at once too.
        #expect(await numbers.next() == 2)
        #expect(await numbers.next() == 3)
        try await socket.send(.text("on the new one"))
        #expect(try await Self.next(socket) == .text("on the new one"))
        #expect(server.requests.map { $0.headers["X-Attempt"] } == ["1", "2", "3"])
        #expect(server.requests.allSatisfy { $0.headers["token"] == "t1" })
        await socket.close()
    }

    @Test("it gives up after the attempts the options allow, with the last error")
    func givesUp() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        Self.route(server, drops: 100)
        let socket = try await Self.client(server, attempts: Counter()).webSocket(
            .webSocket("live"), options: Self.quickly)
        let error = await #expect(throws: NetworkError.self) { try await Self.next(socket) }
        #expect(error?.code == .transport)
        #expect(server.requests.count == 4, "the first connection and three attempts")
    }

    @Test(
        "a refused handshake, cancelAll() or a logout stops the reconnection",
        arguments: ["refused", "cancelAll", "logout"])
    func stops(_ cause: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let connections = Counter()
        let stopped = Recorder<Bool>()
        let afterStop = Counter()
        server.route("/v1/live") { _ in
            let number = connections.increment()
            if !stopped.values.isEmpty { _ = afterStop.increment() }
            if number > 1, cause == "refused" { return .json(#"{"code":403,"msg":"banned"}"#, status: 403) }
            return .webSocket { _ in
                // The first connection drops after a moment; any other stays open.
                try? await Task.sleep(for: number == 1 ? .milliseconds(100) : .seconds(5))
            }
        }
        let client = Self.client(server, attempts: Counter())
        let options = WebSocketOptions(
            reconnection: .init(initialDelay: .milliseconds(300), maximumDelay: .milliseconds(300)))
        let socket = try await client.webSocket(.webSocket("live"), options: options)
        let reading = Task { try await Self.next(socket) }
        try await Task.sleep(for: .milliseconds(150))
        stopped.append(true)
        switch cause {
        case "cancelAll": client.cancelAll()
        case "logout": try await client.configuration.session?.logOut()
        default: break
        }
        let error = await #expect(throws: NetworkError.self) { try await reading.value }
        #expect(error?.code == (cause == "refused" ? .httpStatus : .cancelled))
        try await Task.sleep(for: .milliseconds(500))
        // A refusal ends it at the attempt it answers; a stop, before any attempt after it.
        if cause == "refused" {
            #expect(connections.current == 2)
        } else {
            #expect(afterStop.current == 0, "no handshake after the stop")
        }
    }
}
