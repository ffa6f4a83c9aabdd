import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Streamed answers recorded with the moment each piece arrived, and replayed as streams.
@Suite struct RecordingStreamTests {
    /// A server that sends three pieces, `gap` apart, and ends.
    private func server(gap: Duration = .milliseconds(700)) throws -> LoopbackServer {
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
        #expect((chunks.last?.time ?? 0) >= 1300, "the last piece came about 1.4 s after the head")
        #expect(chunks.map(\.size).reduce(0, +) == entry.response.content.bytes?.count)
        let text = try recording.text()
        #expect(!text.contains("CANARY-STREAM"), "the stream's body is redacted like any other")

        let fast = try await read(recordingClient(server.baseURL, try recording.replayer().0))
        #expect(fast.pieces.count == chunks.count, "replayed as a stream, piece by piece")
        // Half the recorded time, however loaded the machine: no pause is played.
        #expect(fast.times.last! < .milliseconds(700) * TestTiming.scale, "as fast as possible")
        let expected = String(decoding: fast.pieces.reduce(Data(), +), as: UTF8.self)
        #expect(expected.contains(#""token":"<redacted>""#))

        let transport = try RecordingTransport(file: recording.file, mode: .replay, streamReplay: .realTime)
        let paced = try await read(recordingClient(server.baseURL, transport))
        #expect(paced.pieces == fast.pieces)
        #expect(paced.times.last! >= .milliseconds(1300), "at the recorded pace")
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
        #expect(replayError?.code == .transport)
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
