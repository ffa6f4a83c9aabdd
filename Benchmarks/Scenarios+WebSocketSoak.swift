import Courier
import CourierTesting
import Foundation

extension Scenarios {
    /// S10-websocket: 10,000 WebSocket connections against LoopbackServer's WebSocket route,
    /// each ended a way drawn at random: closed after an echo, released while open, its reader
    /// cancelled, dropped by the server, or its handshake cancelled by `cancelAll()`. Each must
    /// end within ten seconds (a stuck one fails the run), and the descriptors must come back
    /// once the client is released. The memory bound (1.6 KB a connection) only catches a gross
    /// leak: the process also starts a server thread and an opening thread per connection,
    /// 20,000 threads whose stacks and arenas the C library keeps in part (6.4 to 7.2 MB for
    /// 10,000 connections and 11.6 MB for 30,000 on 2026-12-06, with nothing kept by the
    /// client).
    func webSocketSoak() async throws -> Measurement {
        let count = 10_000
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/ws") { _ in
            .webSocket { connection in
                while true {
                    switch await connection.receive(timeout: .seconds(10)) {
                    case .message(.text("drop")): return
                    case .message(let message): connection.send(message)
                    case .ping, .pong: continue
                    default: return
                    }
                }
            }
        }
        // The record would keep every handshake (about 2 KB each).
        server.isRecording = false
        // What opens for good on first use (the connections' thread and its wake-up pipe)
        // opens before the baseline.
        _ = try await Self.webSocketCycles(count: 20, baseURL: server.baseURL)
        let baseline = await Descriptors.settling(at: 0)
        let (growth, ways) = try await Self.webSocketCycles(count: count, baseURL: server.baseURL)
        let released = await Descriptors.settling(at: baseline)
        let megabytes = Double(growth) / 1_048_576
        return Measurement(
            scenario: "S10",
            detail:
                "WebSocket soak against LoopbackServer: \(count) connections on \(transportName), ended at random (\(ways)); descriptors \(baseline) → \(released) once the client is released",
            unit: "MB RSS growth", courier: megabytes, baseline: 0, ratio: 0,
            target: "none stuck, descriptors back, ≤ 16 MB",
            meetsTarget: megabytes <= 16 && baseline >= 0 && released <= baseline)
    }

    /// The ways a connection ends in the soak.
    private enum Ending: String, CaseIterable {
        case closed, released, readerCancelled, serverDropped, handshakeCancelled
    }

    /// Runs the cycles on a client made and released here, after a warm-up of 200; returns the
    /// growth of resident memory and how many cycles ended each way.
    private static func webSocketCycles(count: Int, baseURL: URL) async throws -> (Int64, String) {
        let client = NetworkClient(
            configuration: .init(baseURL: baseURL, transport: NetworkClient.Configuration.defaultTransport()))
        let options = WebSocketOptions(pingInterval: nil)
        var tally: [Ending: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        var residentBefore: Int64 = 0
        for index in 0..<(count + 200) {
            if index == 200 { residentBefore = Memory.resident }
            let ending = Ending.allCases.randomElement(using: &generator)!
            if index >= 200 { tally[ending, default: 0] += 1 }
            try await within(.seconds(10)) {
                try await cycle(ending, client: client, options: options)
            }
        }
        let ways = Ending.allCases.map { "\($0.rawValue) \(tally[$0] ?? 0)" }.joined(separator: ", ")
        return (Memory.resident - residentBefore, ways)
    }

    private struct Stuck: Error, CustomStringConvertible {
        var description: String { "a WebSocket cycle did not end within ten seconds" }
    }

    /// Runs `work`, failing with ``Stuck`` when it takes longer than `limit`; a stuck `work` is
    /// left behind (cancelled), not waited for.
    private static func within(_ limit: Duration, _ work: @escaping @Sendable () async throws -> Void) async throws {
        let outcome = FirstOutcome()
        var running: Task<Void, Never>?
        var timer: Task<Void, Never>?
        let result = await withCheckedContinuation { continuation in
            outcome.wait(continuation)
            running = Task {
                do {
                    try await work()
                    outcome.finish(.success(()))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            timer = Task {
                try? await Task.sleep(for: limit)
                outcome.finish(.failure(Stuck()))
            }
        }
        running?.cancel()
        timer?.cancel()
        try result.get()
    }

    /// The first of two outcomes, handed to one waiter.
    ///
    /// `@unchecked Sendable`: `waiting` is guarded by `lock`.
    private final class FirstOutcome: @unchecked Sendable {
        private let lock = NSLock()
        private var waiting: CheckedContinuation<Result<Void, any Error>, Never>?

        func wait(_ continuation: CheckedContinuation<Result<Void, any Error>, Never>) {
            lock.withLock { waiting = continuation }
        }

        func finish(_ result: Result<Void, any Error>) {
            lock.withLock {
                defer { waiting = nil }
                return waiting
            }?.resume(returning: result)
        }
    }

    private static func cycle(_ ending: Ending, client: NetworkClient, options: WebSocketOptions) async throws {
        let endpoint = Endpoint<WebSocket>.webSocket("ws")
        switch ending {
        case .handshakeCancelled:
            let opening = Task { try await client.webSocket(endpoint, options: options) }
            client.cancelAll()
            // Opened before the cancellation, or refused by it: either way it ends.
            if let socket = try? await opening.value { await socket.close() }
            return
        default:
            break
        }
        let socket = try await client.webSocket(endpoint, options: options)
        var messages = socket.messages.makeAsyncIterator()
        switch ending {
        case .closed:
            try await socket.send(.text("ping"))
            _ = try await messages.next()
            await socket.close()
        case .released:
            try await socket.send(.text("bye"))
        case .readerCancelled:
            let reading = Task { [socket] in
                var messages = socket.messages.makeAsyncIterator()
                return try await messages.next()
            }
            reading.cancel()
            _ = try? await reading.value
        case .serverDropped:
            try await socket.send(.text("drop"))
            _ = try? await messages.next()
        case .handshakeCancelled:
            break
        }
    }

}
