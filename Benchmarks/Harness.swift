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
    /// Above 1 means Courier is ahead, below 1 behind (`courier / baseline` when higher is
    /// better, `baseline / courier` otherwise).
    let ratio: Double
    /// The target in words (`≥ 0.98`), if the scenario has one.
    let target: String?
    let meetsTarget: Bool

    /// A comparison whose ratio must reach `minimum`, if given.
    static func ratio(
        _ scenario: String, _ detail: String, unit: String, courier: Double, baseline: Double, higherIsBetter: Bool,
        minimum: Double?
    ) -> Measurement {
        let ratio = higherIsBetter ? courier / baseline : baseline / courier
        return Measurement(
            scenario: scenario, detail: detail, unit: unit, courier: courier, baseline: baseline, ratio: ratio,
            target: minimum.map { "≥ \(String(format: "%.3f", $0))" }, meetsTarget: minimum.map { ratio >= $0 } ?? true)
    }

    /// A cost with a budget of its own (no baseline to run): `value` must stay at or under
    /// `maximum`, which is shown as the baseline; the ratio is `maximum / value`.
    static func budget(_ scenario: String, _ detail: String, unit: String, value: Double, maximum: Double)
        -> Measurement
    {
        Measurement(
            scenario: scenario, detail: detail, unit: unit, courier: value, baseline: maximum, ratio: maximum / value,
            target: "≤ \(Report.format(maximum)) \(unit)", meetsTarget: value <= maximum)
    }
}

/// Runs A and B alternately (A B A B …) after a warm-up and keeps the median of each, so drift
/// on a shared machine hits both sides alike.
enum Harness {
    static func interleaved(
        repetitions: Int, warmUp: () async throws -> Void, courier: @escaping () async throws -> Double,
        baseline: @escaping () async throws -> Double
    ) async throws -> (courier: Double, baseline: Double) {
        let medians = try await interleaved(repetitions: repetitions, warmUp: warmUp, runs: [courier, baseline])
        return (medians[0], medians[1])
    }

    /// Runs each of `runs` in turn, `repetitions` times (A B C A B C …) after a warm-up, and
    /// returns the median of each.
    static func interleaved(
        repetitions: Int, warmUp: () async throws -> Void, runs: [() async throws -> Double]
    ) async throws -> [Double] {
        try await warmUp()
        var values = Array(repeating: [Double](), count: runs.count)
        for _ in 0..<repetitions {
            for (index, run) in runs.enumerated() { values[index].append(try await run()) }
        }
        return values.map(median)
    }

    /// Sends with each of `senders` in turn, `block` calls at a time, in a new order each round
    /// (A B C, then C A B, B A C, …, drawn from a fixed seed), until each has made `count`
    /// calls, `repetitions` times after a warm-up; returns the median of each sender's calls per
    /// second. Finer than ``interleaved(repetitions:warmUp:runs:)``: a slow spell of a second or
    /// two on a shared machine falls on every sender alike, so the ratio of two of them stays
    /// steady even when their rates move.
    static func alternated(
        repetitions: Int, count: Int, block: Int, warmUp: () async throws -> Void,
        senders: [() async throws -> Void]
    ) async throws -> [Double] {
        precondition(block > 0 && count >= block, "each sender needs at least one whole block")
        try await warmUp()
        var rates = Array(repeating: [Double](), count: senders.count)
        // The same orders in every run on one toolchain (the standard library's shuffle may
        // differ between toolchains).
        var order = SplitMix64(seed: 2026)
        for _ in 0..<repetitions {
            var elapsed = Array(repeating: 0.0, count: senders.count)
            for _ in 0..<(count / block) {
                // A new order each round: a sender that leaves the machine busy for a moment
                // (URLSession's threads) does not always slow the same one after it.
                for index in senders.indices.shuffled(using: &order) {
                    elapsed[index] += try await seconds { for _ in 0..<block { try await senders[index]() } }
                }
            }
            for index in senders.indices { rates[index].append(Double(count / block * block) / elapsed[index]) }
        }
        return rates.map(median)
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

    /// Runs `count` calls of `body` spread over `concurrency` tasks and returns calls per second.
    static func rate(count: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void)
        async throws -> Double
    {
        try await rate(count: count, concurrency: concurrency) { _ in try await body() }
    }

    /// The same, `body` told the number of its call (0 to `count` - 1).
    static func rate(count: Int, concurrency: Int, _ body: @escaping @Sendable (Int) async throws -> Void)
        async throws -> Double
    {
        let seconds = try await seconds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for index in stride(from: worker, to: count, by: concurrency) { try await body(index) }
                    }
                }
                try await group.waitForAll()
            }
        }
        return Double(count) / seconds
    }
}

/// A small seeded generator (SplitMix64), so the benchmark's orders are the same in every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
