import Courier
import CourierTesting
import Foundation
import Testing

/// Cancellation at random moments: near the start, mid-flight and near the end of transfers,
/// where Linux URLSession is known to crash or deadlock.
@Suite struct CancellationStormTests {
    @Test("400 requests cancelled at random moments all end, as success or cancelled, and the client stays usable")
    func storm() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        CancellationWave.route(on: backend.server, path: "/v1/item")
        let client = backend.client
        // 25 waves of 16, so cancellations land before sending, mid-flight and near the end.
        let (outcomes, window) = await CancellationWave.storm(
            client, path: "item", waves: 25, size: 16, delays: 0...6, startWindow: 12_000)
        #expect(outcomes.values.reduce(0, +) == 400)
        #expect(Set(outcomes.keys).isSubset(of: ["success", "cancelled"]), "\(outcomes)")
        // The random plan covers both sides of the race, and cancellations that hit the wire.
        #expect(outcomes["success", default: 0] > 0 && outcomes["cancelled", default: 0] > 0, "\(outcomes)")
        let midFlight = backend.server.events.filter { if case .clientClosedEarly = $0 { true } else { false } }.count
        #expect(midFlight > 0)
        print("cancellation storm:", outcomes, "closed mid-flight:", midFlight, "last window:", window, "µs")
        #expect(client.activeRequestCount == 0)
        #expect(try await client.send(Endpoint<Int>.get("item")) == 0)
    }
}
