import Courier
import Foundation

extension Scenarios {
    /// S20: WebSockets against an echo server in a process of its own. Text messages of 1 KB
    /// echoed in bursts of 100 (messages per second) and one at a time (the round trip), by
    /// Courier on its default transport and by a raw client that frames by hand on a blocking
    /// socket, interleaved; and the peak memory growth while 1,000 connections stand open and
    /// idle.
    func s20WebSocket() async throws -> [Measurement] {
        let echo = try WebSocketEchoProcess()
        defer { echo.stop() }
        let text = String(repeating: "x", count: 1_024)
        let bytes = Array(text.utf8)
        let (burstCount, singleCount) = quick ? (5_000, 1_000) : (40_000, 8_000)
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(echo.port)/")!,
                transport: NetworkClient.Configuration.defaultTransport()))
        let courier = try await CourierEcho(client: client, text: text)
        let raw = try RawWebSocket(port: echo.port)
        let medians = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                _ = try await courier.echo(count: 2_000, burst: 100)
                _ = try await Self.onThread { try raw.echo(bytes, count: 2_000, burst: 100) }
            },
            runs: [
                { Double(burstCount) / (try await courier.echo(count: burstCount, burst: 100)) },
                {
                    Double(burstCount)
                        / (try await Self.onThread { try raw.echo(bytes, count: burstCount, burst: 100) })
                },
            ])
        // The round trip in blocks of 200 messages, the two clients' alternated: the blocking
        // client's own round trip moves by half between runs on this machine, and a slow spell
        // falls on both alike.
        let blocks = singleCount / 200
        var (courierTrip, rawTrip) = ([Double](), [Double]())
        for _ in 0..<repetitions {
            var (courierSeconds, rawSeconds) = (0.0, 0.0)
            for _ in 0..<blocks {
                courierSeconds += try await courier.echo(count: 200, burst: 1)
                rawSeconds += try await Self.onThread { try raw.echo(bytes, count: 200, burst: 1) }
            }
            courierTrip.append(courierSeconds / Double(blocks * 200) * 1e6)
            rawTrip.append(rawSeconds / Double(blocks * 200) * 1e6)
        }
        await courier.close()
        return [
            .ratio(
                "S20", "1 KB text messages echoed in bursts of 100 — \(transportName) vs raw-socket framing",
                unit: "msg/s", courier: medians[0], baseline: medians[1], higherIsBetter: true, minimum: 0.5),
            .ratio(
                "S20-rtt", "one 1 KB text message's round trip — \(transportName) vs raw-socket framing",
                unit: "µs", courier: Harness.median(courierTrip), baseline: Harness.median(rawTrip),
                higherIsBetter: false, minimum: 0.25),
            try await idleConnections(client: client),
        ]
    }

    /// The peak resident growth, per connection, while 1,000 WebSockets stand open and idle
    /// (keep-alive on, at its default interval), after a first 20 have opened what stays open.
    private func idleConnections(client: NetworkClient) async throws -> Measurement {
        let count = 1_000
        let endpoint = Endpoint<WebSocket>.webSocket("echo")
        for _ in 0..<20 { try await client.webSocket(endpoint).close() }
        var sockets: [WebSocket] = []
        let growth: Int64
        do {
            growth = try await Memory.peakGrowth {
                for _ in 0..<count { sockets.append(try await client.webSocket(endpoint)) }
                try await Task.sleep(for: .milliseconds(500))
            }
        } catch {
            for socket in sockets { await socket.close() }
            throw error
        }
        let open = sockets.count
        for socket in sockets { await socket.close() }
        let kilobytes = Double(growth) / 1_024 / Double(open)
        return .budget(
            "S20m", "peak RSS growth while \(open) WebSockets stand open and idle, per connection — \(transportName)",
            unit: "KB", value: kilobytes, maximum: 32)
    }

    /// Runs `body` on a thread of its own (it blocks) and returns what it returns.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// One Courier WebSocket to the echo peer and its reader, used by one task at a time.
private final class CourierEcho {
    private let socket: WebSocket
    private var messages: WebSocket.Messages.AsyncIterator
    private let text: String

    init(client: NetworkClient, text: String) async throws {
        socket = try await client.webSocket(.webSocket("echo"))
        messages = socket.messages.makeAsyncIterator()
        self.text = text
    }

    /// Sends `count` messages in bursts of `burst` (a burst sent, then its echoes read);
    /// returns the seconds it took. Throws when an echo is not the message.
    func echo(count: Int, burst: Int) async throws -> Double {
        try await Harness.seconds {
            var sent = 0
            while sent < count {
                let now = min(burst, count - sent)
                for _ in 0..<now { try await socket.send(.text(text)) }
                for _ in 0..<now {
                    guard case .text(let echoed) = try await messages.next(), echoed == text else {
                        throw RawWebSocket.Failure("an echo was not the message")
                    }
                }
                sent += now
            }
        }
    }

    func close() async { await socket.close() }
}
