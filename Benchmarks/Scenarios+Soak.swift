import Courier
import Foundation

extension Scenarios {
    /// S10: soaks of 100,000 GETs from 16 concurrent tasks on the default transport (also with
    /// `--quick`), one against each peer: nginx when installed, and always LoopbackServer, which
    /// handles connections in its own way and runs in this process.
    func s10Soak() async throws -> [Measurement] {
        var results = [try await soak(against: peer)]
        if !peer.inProcess {
            let loopback = try Peer.startLoopback(ordersBody: ordersBody)
            defer { loopback.stop() }
            results.append(try await soak(against: loopback))
        }
        return results
    }

    /// One soak with a client of its own: resident memory after a warm-up and after the soak;
    /// open descriptors and temporary files before the client exists and after it is released,
    /// so the connections it keeps for reuse do not count.
    private func soak(against peer: Peer) async throws -> Measurement {
        let count = 100_000
        // Dispatch opens a timer descriptor, for good, on the first sleep (the wait below).
        try await Task.sleep(for: .milliseconds(1))
        let temporaryBefore = Self.temporaryFiles()
        let descriptorsBefore = Self.openDescriptors()
        let (rate, growth) = try await Self.soak(count: count, baseURL: peer.baseURL.appendingPathComponent("api/"))
        let descriptorsAfter = await Self.openDescriptors(settlingAt: descriptorsBefore)
        let temporaryLeft = Self.temporaryFiles().subtracting(temporaryBefore)
        let megabytes = Double(growth) / 1_048_576
        return Measurement(
            scenario: "S10",
            detail:
                "soak against \(peer.name): \(count) GETs from 16 tasks on \(transportName) at \(Report.format(rate)) req/s; \(String(format: "%.1f", Double(growth) / Double(count))) B per request; descriptors \(descriptorsBefore) → \(descriptorsAfter) once the client is released; \(temporaryLeft.count) temporary files left",
            unit: "MB RSS growth", courier: megabytes, baseline: 0, ratio: 0,
            target: "≤ 8 MB, descriptors back, no temporary file",
            meetsTarget: megabytes <= 8 && descriptorsAfter <= descriptorsBefore && temporaryLeft.isEmpty)
    }

    /// Runs the soak on a client made and released here; returns the rate and the growth of
    /// resident memory from after a warm-up to the end.
    private static func soak(count: Int, baseURL: URL) async throws -> (rate: Double, growth: Int64) {
        let client = NetworkClient(
            configuration: .init(baseURL: baseURL, transport: NetworkClient.Configuration.defaultTransport()))
        let endpoint = Endpoint<[Order]>.get("orders")
        _ = try await Harness.rate(count: 2_000, concurrency: 16) { _ = try await client.send(endpoint) }
        let residentBefore = Memory.resident
        let rate = try await Harness.rate(count: count, concurrency: 16) { _ = try await client.send(endpoint) }
        return (rate, Memory.resident - residentBefore)
    }

    private static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The open descriptors once they are back to `baseline`, or after 5 s: a released
    /// transport's loop thread and the peer's connection threads close theirs a moment later.
    private static func openDescriptors(settlingAt baseline: Int) async -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        var count = openDescriptors()
        while count > baseline, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            count = openDescriptors()
        }
        return count
    }

    /// The names in the temporary directory.
    private static func temporaryFiles() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? [])
    }
}
