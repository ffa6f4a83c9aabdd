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
                    let endpoint = Endpoint<Int>.get(path, query: ["delay": "\(delay)"]).sharingIdenticalRequests(false)
                    let task = Task { try await client.send(endpoint) }
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

    /// Runs `waves` waves of `size` and adds up their outcomes. A request's life follows the
    /// machine's load (with the whole suite or a sanitizer running, a request can take far longer
    /// than usual to start), so the window of cancel moments follows what the last wave saw:
    /// wider when none succeeded, narrower when none was cancelled. Both sides of the race are
    /// then covered however fast the machine is.
    static func storm(
        _ client: NetworkClient, path: String, waves: Int, size: Int, delays: ClosedRange<Int>, startWindow: Int
    ) async -> (outcomes: [String: Int], lastWindow: Int) {
        var outcomes: [String: Int] = [:]
        var window = startWindow
        for _ in 0..<waves {
            let wave = await run(client, path: path, size: size, delays: delays, cancelWithin: 0...window)
            outcomes.merge(wave, uniquingKeysWith: +)
            if wave["success", default: 0] == 0 {
                window = min(window * 2, 2_000_000)
            } else if wave["cancelled", default: 0] == 0 {
                window = max(window / 2, 1_000)
            }
        }
        return (outcomes, window)
    }
}
