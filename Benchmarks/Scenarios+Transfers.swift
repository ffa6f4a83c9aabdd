import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Scenarios {
    /// Bytes moved by S7 and S8: 1 GB, or 128 MB with `--quick`.
    private var transferSize: Int64 { quick ? 128 << 20 : 1 << 30 }

    /// A scratch directory for one transfer scenario, or `nil` when the disk is too small.
    private func scratch(_ name: String) throws -> URL? {
        let attributes = try? FileManager.default.attributesOfFileSystem(
            forPath: FileManager.default.temporaryDirectory.path)
        let free = (attributes?[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
        guard free > transferSize * 4 else {
            print("\(name) skipped: \(free >> 20) MB free on disk, \(transferSize * 4 >> 20) MB needed")
            return nil
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A client for large transfers (long deadline) on the given transport.
    private func transferClient(_ variant: Variant) -> NetworkClient {
        let transport =
            variant == .defaultTransport ? NetworkClient.Configuration.defaultTransport() : URLSessionTransport()
        return NetworkClient(configuration: .init(baseURL: peer.baseURL, timeout: .seconds(600), transport: transport))
    }

    private typealias Run = (seconds: Double, growth: Int64)

    /// S7: a large download to a file: throughput and peak resident memory growth, Courier's
    /// download (on each transport) against URLSession's own download task.
    func s7Download() async throws -> [Measurement] {
        guard peer.servesFiles, let directory = try scratch("s7") else { return [] }
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = peer.filesDirectory.appendingPathComponent("big.bin")
        try Self.makeFile(at: source, size: transferSize)
        defer { try? FileManager.default.removeItem(at: source) }
        let url = peer.baseURL.appendingPathComponent("files/big.bin")
        let destination = directory.appendingPathComponent("big.bin")
        let runs = try await measureVariants(
            courier: { client in
                _ = try await client.download(.download(url.absoluteString), to: destination, overwrite: .replace).value
            },
            raw: {
                let temporary = try await self.rawDownload(url)
                try FileManager.default.moveItem(at: temporary, to: destination)
            },
            after: { try FileManager.default.removeItem(at: destination) })
        return transferMeasurements("S7", "download to file", runs)
    }

    /// S8: a large multipart upload from a file: throughput and peak resident memory growth,
    /// Courier (on each transport) against a hand-built multipart file sent with URLSession's
    /// upload-from-file.
    func s8Upload() async throws -> [Measurement] {
        guard peer.servesFiles, let directory = try scratch("s8") else { return [] }
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("video.mp4")
        try Self.makeFile(at: source, size: transferSize)
        let url = peer.baseURL.appendingPathComponent("api/upload")
        let runs = try await measureVariants(
            courier: { client in
                var form = MultipartForm(fields: ["title": "benchmark"])
                form.append(name: "video", fileAt: source)
                form.temporaryDirectory = directory
                _ = try await client.upload(Endpoint<EmptyResponse>.post(url.absoluteString, body: .multipart(form)))
                    .value
            },
            raw: { try await self.rawMultipartUpload(source, to: url, in: directory) },
            after: {})
        return transferMeasurements("S8", "multipart upload from file", runs)
    }

    /// Time and peak memory of `courier` on the default transport, on URLSessionTransport, and
    /// of `raw`, in that order, over 2 (quick) or 3 rounds; `after` cleans up after each run.
    private func measureVariants(
        courier: (NetworkClient) async throws -> Void, raw: () async throws -> Void, after: () throws -> Void
    ) async throws -> [[Run]] {
        var runs: [[Run]] = [[], [], []]
        for _ in 0..<(quick ? 2 : 3) {
            for (index, variant) in [Variant.defaultTransport, .urlSession].enumerated() {
                let client = transferClient(variant)
                runs[index].append(try await Self.measured { try await courier(client) })
                try after()
            }
            runs[2].append(try await Self.measured(raw))
            try after()
        }
        return runs
    }

    /// Rows for the default transport and URLSessionTransport against raw: throughput, and
    /// the worst peak memory growth (the target applies to the default transport).
    private func transferMeasurements(_ scenario: String, _ what: String, _ runs: [[Run]]) -> [Measurement] {
        let megabytes = Double(transferSize) / 1_000_000
        func speed(_ runs: [Run]) -> Double { Harness.median(runs.map { megabytes / $0.seconds }) }
        func peak(_ runs: [Run]) -> Double { Double(runs.map(\.growth).max() ?? 0) / 1_048_576 }
        let size = transferSize >> 20
        var rows: [Measurement] = []
        for (index, (suffix, name)) in [("", transportName), ("-urlsession", "URLSessionTransport")].enumerated() {
            rows.append(
                .ratio(
                    scenario + suffix, "\(size) MB \(what): throughput — \(name)", unit: "MB/s",
                    courier: speed(runs[index]), baseline: speed(runs[2]), higherIsBetter: true, minimum: nil))
            let courierPeak = peak(runs[index])
            rows.append(
                Measurement(
                    scenario: scenario + suffix + "-mem",
                    detail: "\(size) MB \(what): peak RSS growth, worst run — \(name)", unit: "MB",
                    courier: courierPeak, baseline: peak(runs[2]), ratio: peak(runs[2]) / max(courierPeak, 0.001),
                    target: suffix.isEmpty ? "Courier ≤ 32 MB" : nil, meetsTarget: !suffix.isEmpty || courierPeak <= 32)
            )
        }
        return rows
    }

    /// Seconds and peak resident growth of `body`.
    private static func measured(_ body: () async throws -> Void) async throws -> (seconds: Double, growth: Int64) {
        var seconds = 0.0
        let growth = try await Memory.peakGrowth { seconds = try await Harness.seconds(body) }
        return (seconds, growth)
    }

    /// A file of `size` bytes of a repeating pattern, written in 1 MB pieces.
    private static func makeFile(at url: URL, size: Int64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let piece = Data((0..<(1 << 20) as Range<Int>).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        for _ in 0..<(size >> 20) { try handle.write(contentsOf: piece) }
    }

    /// URLSession's download task, as a hand-written client would use it.
    private func rawDownload(_ url: URL) async throws -> URL {
        try await withCheckedThrowingContinuation { continuation in
            let task = raw.downloadTask(with: url) { location, _, error in
                guard let location else { return continuation.resume(throwing: error ?? URLError(.unknown)) }
                // The system deletes `location` when this handler returns: keep it.
                let kept = location.deletingLastPathComponent().appendingPathComponent("kept-\(UUID().uuidString)")
                continuation.resume(
                    with: Result {
                        try FileManager.default.moveItem(at: location, to: kept)
                        return kept
                    })
            }
            task.resume()
        }
    }

    /// A multipart body built by hand in a file and sent with upload-from-file.
    private func rawMultipartUpload(_ source: URL, to url: URL, in directory: URL) async throws {
        let boundary = "raw-\(UUID().uuidString)"
        let body = directory.appendingPathComponent("raw-body")
        _ = FileManager.default.createFile(atPath: body.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: body) }
        let output = try FileHandle(forWritingTo: body)
        try output.write(
            contentsOf: Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbenchmark\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"video\"; filename=\"video.mp4\"\r\nContent-Type: video/mp4\r\n\r\n"
                    .utf8))
        let input = try FileHandle(forReadingFrom: source)
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
        try input.close()
        try output.write(contentsOf: Data("\r\n--\(boundary)--\r\n".utf8))
        try output.close()
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        let _: Void = try await withCheckedThrowingContinuation { continuation in
            raw.uploadTask(with: request, fromFile: body) { _, response, error in
                if let error { return continuation.resume(throwing: error) }
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                continuation.resume(with: status == 200 ? .success(()) : .failure(URLError(.badServerResponse)))
            }.resume()
        }
    }
}
