import Courier
import CourierTesting
import Foundation

extension Scenarios {
    /// An order as the recorded backend sends it.
    private struct RecordedOrder: Codable, Sendable {
        let id: Int
        let title: String
        let note: String
    }

    /// S15: recorded traffic. Requests per second replayed by `RecordingTransport` against the
    /// same requests sent to CourierTesting's LoopbackServer (the round trip a test would make
    /// without a recording), on one client setup; and the time to load a recording of 1,000
    /// exchanges of a 1 KB envelope each.
    func s15Recording() async throws -> [Measurement] {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.isRecording = false
        let note = String(repeating: "x", count: 900)
        server.route("/orders") { request in
            .envelope(data: RecordedOrder(id: Int(request.query["id"] ?? "") ?? 0, title: "Tea", note: note))
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-s15-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("orders.har")
        let count = 1_000
        let endpoint = { (id: Int) in Endpoint<RecordedOrder>.get("orders", query: ["id": String(id)]) }
        let client = { (transport: any Transport) in
            NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))
        }
        let live = client(NetworkClient.Configuration.defaultTransport())
        let recorder = try RecordingTransport(
            file: file, mode: .recordAll, wrapping: NetworkClient.Configuration.defaultTransport())
        let recording = client(recorder)
        for id in 0..<count { _ = try await recording.send(endpoint(id)) }

        let replay: () async throws -> Double = {
            let replaying = client(try RecordingTransport(file: file, mode: .replay))
            return try await Harness.seconds { for id in 0..<count { _ = try await replaying.send(endpoint(id)) } }
        }
        let (replayed, sent) = try await Harness.interleaved(
            repetitions: repetitions, warmUp: { _ = try await replay() },
            courier: { Double(count) / (try await replay()) },
            baseline: {
                Double(count)
                    / (try await Harness.seconds { for id in 0..<count { _ = try await live.send(endpoint(id)) } })
            })
        var loads: [Double] = []
        for _ in 0..<(repetitions * 2) {
            loads.append(try await Harness.seconds { _ = try RecordingTransport(file: file, mode: .replay) } * 1000)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        return [
            .ratio(
                "S15",
                "\(count) GETs of a 1 KB envelope replayed from a recording vs sent to LoopbackServer — \(transportName)",
                unit: "req/s", courier: replayed, baseline: sent, higherIsBetter: true, minimum: 5),
            .budget(
                "S15l", "loading a recording of \(count) exchanges (\(size / 1024) KB)", unit: "ms",
                value: Harness.median(loads), maximum: 50),
        ]
    }
}
