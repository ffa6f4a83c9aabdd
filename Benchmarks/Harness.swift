import Foundation

/// One scenario's result: Courier against its baseline, measured in the same run.
struct Measurement: Codable {
    let scenario: String
    let detail: String
    let unit: String
    /// Median of Courier's repetitions.
    let courier: Double
    /// Median of the baseline's repetitions.
    let baseline: Double
    /// `courier / baseline` when higher is better, `baseline / courier` otherwise: above 1 means
    /// Courier is ahead, below 1 behind.
    let ratio: Double
    /// The target the ratio must reach, if the scenario has one.
    let target: Double?

    var meetsTarget: Bool { target.map { ratio >= $0 } ?? true }
}

/// Runs A and B alternately (A B A B …) after a warm-up and keeps the median of each, so drift
/// on a shared machine hits both sides alike.
enum Harness {
    static func interleaved(
        repetitions: Int, warmUp: () async throws -> Void, courier: () async throws -> Double,
        baseline: () async throws -> Double
    ) async throws -> (courier: Double, baseline: Double) {
        try await warmUp()
        var courierValues: [Double] = []
        var baselineValues: [Double] = []
        for _ in 0..<repetitions {
            courierValues.append(try await courier())
            baselineValues.append(try await baseline())
        }
        return (median(courierValues), median(baselineValues))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Seconds taken by `body`.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
