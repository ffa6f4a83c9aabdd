import Courier
import Foundation

extension Scenarios {
    /// An observer that is called and does nothing.
    private struct IdleObserver: RequestObserver {}

    /// An observer that keeps every timeline's figures, as one that hands spans to a tracer
    /// would read them.
    private final class CollectingObserver: RequestObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var requests = 0
        private var attemptTime = Duration.zero

        func requestEnded(_ timeline: RequestTimeline) {
            let attempts = timeline.attempts.reduce(Duration.zero) { $0 + $1.duration + ($1.phases.firstByte ?? .zero) }
            lock.withLock {
                requests += 1
                attemptTime += attempts + timeline.total
            }
        }
    }

    /// S16: what observing costs. S1's sequential GETs on three clients of the default
    /// transport, alternated in blocks: with no observer, with one that does nothing, and with
    /// one that reads every timeline.
    func s16Observation() async throws -> [Measurement] {
        let count = quick ? 600 : 4000
        let base = peer.baseURL.appendingPathComponent("api/")
        let make = { (observers: [any RequestObserver]) in
            var configuration = NetworkClient.Configuration(baseURL: base, transport: self.transport)
            configuration.observers = observers
            return NetworkClient(configuration: configuration)
        }
        let clients = [make([]), make([IdleObserver()]), make([CollectingObserver()])]
        let rates = try await Harness.alternated(
            repetitions: repetitions, count: count, block: 100,
            warmUp: { for client in clients { for _ in 0..<200 { _ = try await self.courierOrders(client) } } },
            senders: clients.map { client in { _ = try await self.courierOrders(client) } })
        return [
            .ratio(
                "S16-idle", "\(count) sequential GETs with an observer that does nothing vs none — \(transportName)",
                unit: "req/s", courier: rates[1], baseline: rates[0], higherIsBetter: true, minimum: 0.99),
            .ratio(
                "S16-full", "\(count) sequential GETs with every timeline read vs no observer — \(transportName)",
                unit: "req/s", courier: rates[2], baseline: rates[0], higherIsBetter: true, minimum: 0.97),
        ]
    }
}
