import Courier
import Foundation

extension Scenarios {
    /// S10: a soak: many requests from 16 concurrent tasks on the default transport, with the
    /// resident memory and the open descriptors before and after (after a warm-up, so caches
    /// and connections already exist).
    func s10Soak() async throws -> [Measurement] {
        let count = quick ? 10_000 : 100_000
        _ = try await Harness.rate(count: 2_000, concurrency: 16) { _ = try await self.courierOrders(self.client) }
        let descriptorsBefore = Self.openDescriptors()
        let residentBefore = Memory.resident
        let rate = try await Harness.rate(count: count, concurrency: 16) {
            _ = try await self.courierOrders(self.client)
        }
        let growth = Double(Memory.resident - residentBefore) / 1_048_576
        let descriptorsAfter = Self.openDescriptors()
        let perRequest = Double(Memory.resident - residentBefore) / Double(count)
        return [
            Measurement(
                scenario: "S10",
                detail:
                    "soak: \(count) GETs from 16 tasks on \(transportName) at \(Report.format(rate)) req/s; descriptors \(descriptorsBefore) → \(descriptorsAfter); \(String(format: "%.1f", perRequest)) B per request",
                unit: "MB RSS growth", courier: growth, baseline: 0, ratio: 0, target: "≤ 16 MB, descriptors flat",
                meetsTarget: growth <= 16 && descriptorsAfter <= descriptorsBefore + 2)
        ]
    }

    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}
