import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Streamed answers recorded with the moment each piece arrived, and replayed as streams.
@Suite struct RecordingStreamTests {
    /// A server that sends three pieces, `gap` apart, and ends.
    private func server(gap: Duration = .milliseconds(200)) throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("/v1/feed") { _ in
            .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                for index in 1...3 {
                    writer.event(#"{"n":\#(index),"token":"CANARY-STREAM-\#(index)"}"#)
                    try? await Task.sleep(for: gap)
                }
            }
        }
        return server
    }

    /// Reads a stream whole; the pieces and when each came, after the head.
    private func read(_ client: NetworkClient) async throws -> (pieces: [Data], times: [Duration]) {
        let start = ContinuousClock.now
        let answer = try await client.stream(.get("feed", decoding: .data))
        var pieces: [Data] = []
        var times: [Duration] = []
        for try await piece in answer.body {
            pieces.append(piece)
            times.append(ContinuousClock.now - start)
        }
        return (pieces, times)
    }

    @Test("a stream is recorded piece by piece with its timings, and replayed as a stream, fast or in real time")
    func recordAndReplay() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try server()
        let live = try await read(recordingClient(server.baseURL, try recording.recorder()))
        server.stop()
        #expect(live.pieces.count >= 3)
        let entry = try #require(try recording.archive().entries.first)
        let chunks = try #require(entry.response.content.chunks)
        #expect(chunks.count == live.pieces.count)
        // When each piece came, after the head: in order, the later ones later (how much later
        // depends on how busy the machine was when the head was read).
        let times = chunks.map(\.time)
        #expect(times == times.sorted())
        #expect(times.last! > times.first!)
        #expect(chunks.map(\.size).reduce(0, +) == entry.response.content.bytes?.count)
        let text = try recording.text()
        #expect(!text.contains("CANARY-STREAM"), "the stream's body is redacted like any other")

        // Played as fast as possible: the pieces come long before their recorded moments, here
        // 0, 30 and 60 s after the head, however busy the machine.
        try retime(recording, chunks, every: 30_000)
        let fast = try await read(recordingClient(server.baseURL, try recording.replayer().0))
        #expect(fast.pieces.count == chunks.count, "replayed as a stream, piece by piece")
        #expect(fast.times.last! < .seconds(30) * TestTiming.scale, "as fast as possible")
        let expected = String(decoding: fast.pieces.reduce(Data(), +), as: UTF8.self)
        #expect(expected.contains(#""token":"<redacted>""#))

        // Played in real time, the last piece comes no sooner than its moment, 2 s after the head.
        try retime(recording, chunks, every: 1_000)
        let transport = try RecordingTransport(file: recording.file, mode: .replay, streamReplay: .realTime)
        let paced = try await read(recordingClient(server.baseURL, transport))
        #expect(paced.pieces == fast.pieces)
        #expect(paced.times.last! >= .seconds(2), "at the recorded pace")
    }

    /// Sets the recorded moments of the pieces to 0, `every`, 2 × `every` ms after the head.
    private func retime(_ recording: TemporaryRecording, _ chunks: [HTTPArchive.Chunk], every: Double) throws {
        var archive = try recording.archive()
        archive.entries[0].response.content.chunks = chunks.enumerated().map { index, chunk in
            HTTPArchive.Chunk(time: Double(min(index, 2)) * every, size: chunk.size)
        }
        try archive.jsonData().write(to: recording.file)
    }

    @Test("a stream that the server cut is replayed with its end as recorded")
    func failedStream() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/feed") { _ in
            .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                writer.event("one")
                try? await Task.sleep(for: .milliseconds(50))
                writer.drop()
            }
        }
        let liveError = await networkError {
            _ = try await read(recordingClient(server.baseURL, try recording.recorder()))
        }
        server.stop()
        #expect(liveError != nil)
        let entry = try #require(try recording.archive().entries.first)
        #expect(entry.response.content.streamError != nil)
        let replayError = await networkError {
            _ = try await read(recordingClient(server.baseURL, try recording.replayer().0))
        }
        #expect(replayError?.code == liveError?.code, "the replay ends as the live stream did")
        #expect(replayError?.message == entry.response.content.streamError)
        #expect(entry.response.content.streamErrorCode == liveError?.code.rawValue)
    }

    @Test("a stream that went quiet replays its idle timeout, not a transport failure")
    func idleStream() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/feed") { _ in
            .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                writer.event("one")
                try? await Task.sleep(for: .seconds(30))
            }
        }
        let options = StreamOptions(idleTimeout: .milliseconds(300))
        let readQuiet = { (client: NetworkClient) in
            let answer = try await client.stream(.get("feed", decoding: .data), options: options)
            for try await _ in answer.body {}
        }
        let liveError = await networkError {
            try await readQuiet(recordingClient(server.baseURL, try recording.recorder()))
        }
        server.stop()
        #expect(liveError?.code == .timedOut)
        let replayError = await networkError {
            try await readQuiet(recordingClient(server.baseURL, try recording.replayer().0))
        }
        #expect(replayError?.code == .timedOut)
    }

    @Test("a reader that stops early ends the transfer, and what it read is recorded")
    func earlyStop() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try LoopbackServer()
        server.route("/v1/feed") { _ in
            .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                for index in 1...1000 {
                    guard writer.event("event \(index)") else { return }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        let client = recordingClient(server.baseURL, try recording.recorder())
        do {
            let answer = try await client.stream(.get("feed", decoding: .data))
            for try await _ in answer.body { break }
        }
        // The answer is gone: its connection closes, and the recording is written.
        #expect(
            await server.waitForEvents(timeout: .seconds(10) * TestTiming.scale) {
                $0.contains(.clientClosedEarly(target: "/v1/feed"))
            })
        let entry = try #require(try recording.archive().entries.first)
        #expect(entry.response.content.chunks?.count == 1)
        #expect(entry.comment == "The reader stopped after 1 pieces.")
        server.stop()
    }

    @Test("a request that does not ask for a stream gets a recorded stream's body whole")
    func wholeFromStream() async throws {
        let recording = TemporaryRecording()
        defer { recording.remove() }
        let server = try server(gap: .milliseconds(5))
        let live = try await read(recordingClient(server.baseURL, try recording.recorder()))
        server.stop()
        #expect(live.pieces.count >= 1)
        let recorded = try #require(try recording.archive().entries.first?.response.content.bytes)
        let client = recordingClient(server.baseURL, try recording.replayer().0)
        let whole: Data = try await client.send(.get("feed", decoding: .data))
        #expect(whole == recorded)
        #expect(String(decoding: whole, as: UTF8.self).components(separatedBy: "data: ").count == 4)
    }
}
