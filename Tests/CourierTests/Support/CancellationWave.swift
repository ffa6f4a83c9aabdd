import Courier
import CourierTesting
import Foundation

/// Cancellation storms: requests to an `item?delay=N` route (an envelope of N after N ms) whose
/// tasks are cancelled at random moments, so cancellations land before sending, mid-flight and
/// near the end.
enum CancellationWave {
    /// The route the waves call.
    static func route(on server: LoopbackServer, path: String) {
        server.route(path) { request in
            let delay = Int(request.query["delay"] ?? "0") ?? 0
            return LoopbackServer.Response.envelope(data: delay).delayed(by: .milliseconds(delay))
        }
    }

    /// Sends `size` requests at once, each cancelled after a random wait, and counts the
    /// outcomes: "success", an error code, "wrong value" or "foreign error".
    static func run(
        _ client: NetworkClient, path: String, size: Int, delays: ClosedRange<Int>, cancelWithin: ClosedRange<Int>
    ) async -> [String: Int] {
        await withTaskGroup(of: String.self) { group in
            for _ in 0..<size {
                let delay = Int.random(in: delays)
                let cancelAfter = Duration.microseconds(Int.random(in: cancelWithin))
                group.addTask {
                    let task = Task { try await client.send(Endpoint<Int>.get(path, query: ["delay": "\(delay)"])) }
                    try? await Task.sleep(for: cancelAfter)
                    task.cancel()
                    do {
                        return try await task.value == delay ? "success" : "wrong value"
                    } catch let error as NetworkError {
                        return error.code.rawValue
                    } catch {
                        return "foreign error"
                    }
                }
            }
            return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
    }
}
