import Courier
import Foundation

extension Scenarios {
    /// S10: soaks of 100,000 requests from 16 concurrent tasks on the default transport, one
    /// against each peer: nginx when installed, and always LoopbackServer, which handles
    /// connections in its own way and runs in this process; then 10,000 WebSocket connections. Not with `--quick`: a soak is
    /// never short.
    func s10Soak() async throws -> [Measurement] {
        var results = [try await soak(against: peer)]
        if !peer.inProcess {
            let loopback = try Peer.startLoopback(ordersBody: ordersBody)
            defer { loopback.stop() }
            results.append(try await soak(against: loopback))
        }
        results.append(try await webSocketSoak())
        return results
    }

    /// One soak with a client of its own: GETs, and every 100th request a small multipart
    /// upload written to a temporary file first (in a folder of the soak's own). Resident
    /// memory after a warm-up and at the end; open descriptors while the client lives (after
    /// the warm-up and at the end) and before it exists and after it is released, so the
    /// connections it keeps for reuse do not count; the temporary files left.
    private func soak(against peer: Peer) async throws -> Measurement {
        let count = 100_000
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("courier-soak-\(UUID())")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let baseURL = peer.baseURL.appendingPathComponent("api/")
        // What opens for good on first use (Dispatch's timer, libcurl's and the resolver's
        // state) opens before the baseline.
        _ = try await Self.soak(count: 100, baseURL: baseURL, temporary: temporary)
        try await Task.sleep(for: .milliseconds(1))
        let baseline = Descriptors.open
        let run = try await Self.soak(count: count, baseURL: baseURL, temporary: temporary)
        let released = await Descriptors.settling(at: baseline)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        let megabytes = Double(run.growth) / 1_048_576
        let descriptors =
            "descriptors \(run.descriptors.warm) → \(run.descriptors.end) while the client lives, \(baseline) → \(released) once it is released"
        return Measurement(
            scenario: "S10",
            detail:
                "soak against \(peer.name): \(count) requests (1 in 100 a multipart upload through a temporary file) from 16 tasks on \(transportName) at \(Report.format(run.rate)) req/s; \(String(format: "%.1f", Double(run.growth) / Double(count))) B per request; \(descriptors); \(left.count) temporary files left",
            unit: "MB RSS growth", courier: megabytes, baseline: 0, ratio: 0,
            target: "≤ 8 MB, descriptors back, no temporary file",
            meetsTarget: megabytes <= 8 && baseline >= 0 && released <= baseline
                && run.descriptors.end <= run.descriptors.warm + 2 && left.isEmpty)
    }

    private struct SoakRun {
        let rate: Double
        let growth: Int64
        let descriptors: (warm: Int, end: Int)
    }

    /// Runs `count` requests on a client made and released here, after a warm-up of 2,000.
    private static func soak(count: Int, baseURL: URL, temporary: URL) async throws -> SoakRun {
        let client = NetworkClient(
            configuration: .init(baseURL: baseURL, transport: NetworkClient.Configuration.defaultTransport()))
        // Every request on the wire: sixteen identical ones in flight would otherwise share.
        let orders = Endpoint<[Order]>.get("orders").sharingIdenticalRequests(false)
        var form = MultipartForm(fields: ["title": "soak"])
        form.append(name: "file", data: Data(repeating: 0x61, count: 4096), filename: "soak.bin")
        form.memoryThreshold = 0
        form.temporaryDirectory = temporary
        let upload = Endpoint<EmptyResponse>.post("upload", body: .multipart(form))
        let request: @Sendable (Int) async throws -> Void = { index in
            if index % 100 == 99 {
                _ = try await client.upload(upload).value
            } else {
                _ = try await client.send(orders)
            }
        }
        _ = try await Harness.rate(count: min(count, 2_000), concurrency: 16, request)
        let warm = Descriptors.open
        let residentBefore = Memory.resident
        let rate = try await Harness.rate(count: count, concurrency: 16, request)
        return SoakRun(
            rate: rate, growth: Memory.resident - residentBefore, descriptors: (warm, Descriptors.open))
    }

}
