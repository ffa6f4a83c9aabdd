import Courier
import CourierTesting
import Dispatch
import Foundation

extension Scenarios {
    /// A token of a chat answer, as the stream rows decode it.
    private struct Token: Codable, Sendable {
        let n: Int
        let text: String
    }

    /// S13: streams. Events per second through the event-stream parser and the endpoint's
    /// decoding against a plain line reader with JSONDecoder over the same bytes; the time from
    /// an event leaving the server to its reader (on each transport); and the peak memory growth
    /// while reading a large JSON Lines answer.
    func s13Streams() async throws -> [Measurement] {
        var rows = try await eventThroughput()
        for variant in [Variant.defaultTransport, .urlSession] { rows.append(try await eventLatency(variant)) }
        rows += try await jsonLinesMemory()
        return rows
    }

    /// Events per second, parser and decoding against a hand-written line reader.
    private func eventThroughput() async throws -> [Measurement] {
        let count = quick ? 5_000 : 20_000
        let text = (0..<count).map { #"id: \#($0)"# + "\n" + #"data: {"n":\#($0),"text":"token \#($0) "}"# + "\n\n" }
        let bytes = Data(text.joined().utf8)
        let pieces = stride(from: 0, to: bytes.count, by: 16 << 10).map {
            bytes[$0..<min($0 + (16 << 10), bytes.count)]
        }
        let decoding = ResponseDecoding<Token>.json
        let context = DecodingContext(decoder: JSONDecoder(), envelope: .standard)
        let courier: () throws -> Int = {
            var parser = EventStreamParser()
            var decoded = 0
            for piece in pieces {
                for event in try parser.parse(Data(piece)) {
                    let answer = HTTPResponse(
                        status: 200, headers: ["Content-Type": "application/json"], body: Data(event.data.utf8))
                    _ = try decoding.decode(answer, context)
                    decoded += 1
                }
            }
            return decoded
        }
        // What an app writes by hand: split on line feeds, decode each `data:` line.
        let lineReader: () throws -> Int = {
            let decoder = JSONDecoder()
            var decoded = 0
            var line: [UInt8] = []
            for piece in pieces {
                for byte in piece {
                    guard byte == 0x0A else {
                        line.append(byte)
                        continue
                    }
                    if line.starts(with: Array("data: ".utf8)) {
                        _ = try decoder.decode(Token.self, from: Data(line.dropFirst(6)))
                        decoded += 1
                    }
                    line.removeAll(keepingCapacity: true)
                }
            }
            return decoded
        }
        let (parsedCount, readCount) = (try courier(), try lineReader())
        precondition(parsedCount == count && readCount == count, "\(parsedCount) and \(readCount) of \(count) events")
        let (parsed, read) = try await Harness.interleaved(
            repetitions: repetitions, warmUp: { _ = try courier() },
            courier: { Double(count) / (try await Harness.seconds { _ = try courier() }) },
            baseline: { Double(count) / (try await Harness.seconds { _ = try lineReader() }) })
        return [
            .ratio(
                "S13", "\(count) events: event-stream parser and decoding vs a plain line reader and JSONDecoder",
                unit: "events/s", courier: parsed, baseline: read, higherIsBetter: true, minimum: 0.8)
        ]
    }

    /// The median time from an event's blank line leaving the server to the reader getting it,
    /// small events 5 ms apart.
    private func eventLatency(_ variant: Variant) async throws -> Measurement {
        let count = quick ? 60 : 300
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/events") { _ in
            .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                for index in 0..<count {
                    writer.event(#"{"n":\#(DispatchTime.now().uptimeNanoseconds),"text":"\#(index)"}"#)
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
        }
        let transport: any Transport =
            variant == .defaultTransport ? NetworkClient.Configuration.defaultTransport() : URLSessionTransport()
        let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: transport))
        var delays: [Double] = []
        let options = StreamOptions(reconnection: .never)
        for try await event in client.events(Endpoint<Token>.get("events", decoding: .json), options: options) {
            let now = DispatchTime.now().uptimeNanoseconds
            delays.append(Double(now - UInt64(event.data.n)) / 1e6)
        }
        precondition(delays.count == count, "the stream gave \(delays.count) of \(count) events")
        let median = Harness.median(Array(delays.dropFirst(5)))
        let name = variant == .defaultTransport ? transportName : "URLSessionTransport"
        if variant == .defaultTransport {
            return .budget(
                "S13t", "an event from the server to its reader, median — \(name)", unit: "ms", value: median,
                maximum: 5)
        }
        return Measurement(
            scenario: "S13t-urlsession", detail: "an event from the server to its reader, median — \(name)", unit: "ms",
            courier: median, baseline: 5, ratio: 5 / median, target: nil, meetsTarget: true)
    }

    /// Peak resident growth while reading a large JSON Lines answer line by line (1 GB, 128 MB
    /// with `--quick`, lines of 1 KiB), from the peer's files.
    private func jsonLinesMemory() async throws -> [Measurement] {
        let size: Int64 = quick ? 128 << 20 : 1 << 30
        guard peer.servesFiles else { return [] }
        let source = peer.filesDirectory.appendingPathComponent("lines.jsonl")
        let line = Data((#"{"n":0,"text":""# + String(repeating: "x", count: 1_024 - 20) + "\"}\n").utf8)
        _ = FileManager.default.createFile(atPath: source.path, contents: nil)
        let handle = try FileHandle(forWritingTo: source)
        let block = Data(repeating: 0, count: 0) + (0..<1_024).reduce(into: Data()) { data, _ in data.append(line) }
        for _ in 0..<(size / Int64(block.count)) { try handle.write(contentsOf: block) }
        try handle.close()
        defer { try? FileManager.default.removeItem(at: source) }
        let url = peer.baseURL.appendingPathComponent("files/lines.jsonl")
        let client = NetworkClient(
            configuration: .init(
                baseURL: peer.baseURL, timeout: .seconds(600), transport: NetworkClient.Configuration.defaultTransport()
            ))
        var lines = 0
        var seconds = 0.0
        let growth = try await Memory.peakGrowth {
            seconds = try await Harness.seconds {
                for try await _ in client.lines(Endpoint<Data>.get(url.absoluteString, decoding: .data)) { lines += 1 }
            }
        }
        precondition(Int64(lines) * Int64(line.count) == size / Int64(block.count) * Int64(block.count))
        let megabytes = Double(growth) / 1_048_576
        let limit = 1 + Double(line.count) / 1_048_576
        return [
            Measurement(
                scenario: "S13m",
                detail:
                    "\(size >> 20) MB of JSON Lines read line by line (\(Report.format(Double(size) / 1e6 / seconds)) MB/s): peak RSS growth — \(transportName)",
                unit: "MB", courier: megabytes, baseline: limit, ratio: limit / max(megabytes, 0.001),
                target: "≤ 1 MiB + the longest line", meetsTarget: megabytes <= limit)
        ]
    }
}
