import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Answers read as they arrive (`client.stream`), over real HTTP on the transport under test.
@Suite struct StreamTests {
    static let eventHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"

    static func client(_ url: URL, session: Session? = nil, timeout: Duration = .seconds(10)) -> NetworkClient {
        NetworkClient(
            configuration: .init(baseURL: url, timeout: timeout, session: session, transport: TestTransport.make()))
    }

    static let feed = Endpoint<Data>.get("feed", decoding: .data)

    @Test("the head comes first, then the body piece by piece as the server sends it")
    func headThenPieces() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.eventHead), .send("first"), .pause(.milliseconds(300)), .send("second"), .close,
        ])
        defer { server.stop() }
        let client = Self.client(server.baseURL)
        let answer = try await client.stream(Self.feed)
        #expect(answer.status == 200)
        #expect(answer.headers["Content-Type"] == "text/event-stream")
        var iterator = answer.body.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first == Data("first".utf8))
        var rest = Data()
        while let piece = try await iterator.next() { rest.append(piece) }
        #expect(rest == Data("second".utf8))
        #expect(client.activeRequestCount == 0, "the stream left the requests in flight at its end")
    }

    @Test("a piece is read while the server is still sending: nothing waits for the end")
    func pieceBeforeTheEnd() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.eventHead), .send("first"), .pause(.seconds(30)), .close,
        ])
        defer { server.stop() }
        let answer = try await Self.client(server.baseURL).stream(Self.feed)
        var iterator = answer.body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("first".utf8))
        #expect(server.connections.first?.isClosed == false, "the server is still in its pause")
    }

    @Test("an error status throws with its body before any piece")
    func errorStatus() async throws {
        let server = try FaultServer([.readRequest, .respond(status: 503, body: Data("busy".utf8)), .close])
        defer { server.stop() }
        let error = await networkError { _ = try await Self.client(server.baseURL).stream(Self.feed) }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 503)
        #expect(error?.body == Data("busy".utf8))
    }

    @Test("a JSON envelope with a failing code throws the business error; a successful one is one piece")
    func envelopeAnswer() async throws {
        let failing = #"{"code":7,"msg":"no such chat","data":null}"#
        let server = try FaultServer(script: { connection in
            let body = connection == 0 ? failing : #"{"code":0,"msg":"ok","data":1}"#
            return [
                .readRequest, .respond(headers: ["Content-Type": "application/json"], body: Data(body.utf8)), .close,
            ]
        })
        defer { server.stop() }
        let client = Self.client(server.baseURL)
        let error = await networkError { _ = try await client.stream(Self.feed) }
        #expect(error?.code == .business)
        #expect(error?.businessCode == 7)
        var pieces: [Data] = []
        for try await piece in try await client.stream(Self.feed).body { pieces.append(piece) }
        #expect(pieces == [Data(#"{"code":0,"msg":"ok","data":1}"#.utf8)])
    }

    static func bulkServer(pieces count: Int, of piece: Data) throws -> FaultServer {
        try FaultServer([
            .readRequest,
            .send("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"),
            .send(piece, times: count), .close,
        ])
    }

    @Test("a reader that stops pulling stops the transfer: the buffer stays bounded and no byte is lost")
    func backpressure() async throws {
        let piece = Data(repeating: UInt8(ascii: "x"), count: 64 << 10)
        let count = 256  // 16 MiB
        let server = try Self.bulkServer(pieces: count, of: piece)
        defer { server.stop() }
        let options = StreamOptions(bufferSize: 128 << 10)
        let answer = try await Self.client(server.baseURL).stream(Self.feed, options: options)
        var iterator = answer.body.makeAsyncIterator()
        var total = try await iterator.next()?.count ?? 0
        try await Task.sleep(for: .milliseconds(500))
        let buffered = answer.body.reading.channel.bufferedByteCount
        guard !TestTransport.isURLSession else {
            // Linux URLSession cannot pause a transfer: it lets the reader fall 8 MiB behind, then
            // fails the stream plainly rather than hold more.
            #expect(buffered <= (8 << 20) + (1 << 20), "buffered \(buffered) bytes")
            let error = await networkError { while try await iterator.next() != nil {} }
            #expect(error?.code == .responseTooLarge)
            return
        }
        // One piece from libcurl (16 KiB) may come on top of the buffer.
        #expect(buffered <= options.bufferSize + (64 << 10), "buffered \(buffered) bytes")
        while let next = try await iterator.next() { total += next.count }
        #expect(total == piece.count * count)
    }

    @Test("a reader that keeps up gets every byte, on either transport")
    func keepsUp() async throws {
        let piece = Data((0..<(64 << 10) as Range<Int>).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        // Linux URLSession cannot pause, and lets a reader fall 8 MiB behind at most (loopback
        // is faster than a reader on a busy machine): 6 MiB there, 16 MiB on CurlTransport.
        let count = TestTransport.isURLSession ? 96 : 256
        let server = try Self.bulkServer(pieces: count, of: piece)
        defer { server.stop() }
        let answer = try await Self.client(server.baseURL).stream(
            Self.feed, options: StreamOptions(bufferSize: 64 << 10))
        var received = Data()
        for try await next in answer.body { received.append(next) }
        #expect(received.count == piece.count * count)
        #expect(received.suffix(piece.count) == piece)
    }

    @Test("cancelling the reader closes the connection at once")
    func cancelledReader() async throws {
        let server = try FaultServer([.readRequest, .send(Self.eventHead), .send("a"), .waitForHangUp])
        defer { server.stop() }
        let client = Self.client(server.baseURL)
        let answer = try await client.stream(Self.feed)
        let reader = Task {
            for try await _ in answer.body {}
        }
        try await Task.sleep(for: .milliseconds(100))
        reader.cancel()
        let error = await networkError { try await reader.value }
        #expect(error?.code == .cancelled)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
        #expect(client.activeRequestCount == 0)
    }

    @Test("cancelAll() closes an open stream")
    func cancelAllCloses() async throws {
        let server = try FaultServer([.readRequest, .send(Self.eventHead), .waitForHangUp])
        defer { server.stop() }
        let client = Self.client(server.baseURL)
        let answer = try await client.stream(Self.feed)
        #expect(client.activeRequestCount == 1)
        client.cancelAll()
        let error = await networkError { for try await _ in answer.body {} }
        #expect(error?.code == .cancelled)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
    }

    @Test("a stream dropped unread closes its connection and leaves the requests in flight")
    func droppedUnread() async throws {
        let server = try FaultServer([.readRequest, .send(Self.eventHead), .waitForHangUp])
        defer { server.stop() }
        let client = Self.client(server.baseURL)
        _ = try await client.stream(Self.feed)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
        #expect(client.activeRequestCount == 0)
    }

    @Test("a server that goes silent fails the reader after the idle timeout, not the endpoint's deadline")
    func idleTimeout() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.eventHead), .send(": hi\n"), .pause(.seconds(2)), .send(": hi\n"), .waitForHangUp,
        ])
        defer { server.stop() }
        // A deadline well under the stream's 4.5 s, with room for a loaded machine to bring the
        // head (Linux URLSession delivers it on FoundationNetworking's process-wide queue).
        let client = Self.client(server.baseURL, timeout: .seconds(2))
        let started = ContinuousClock.now
        let answer = try await client.stream(Self.feed, options: StreamOptions(idleTimeout: .milliseconds(2500)))
        var received = Data()
        let error = await networkError { for try await piece in answer.body { received.append(piece) } }
        #expect(error?.code == .timedOut)
        #expect(received == Data(": hi\n: hi\n".utf8), "the heartbeats are bytes like any other")
        // The second heartbeat, two seconds in, reset the timeout: it fired 4.5 s in, not 2.5 s
        // (a late reader only makes it later).
        #expect(ContinuousClock.now - started >= .milliseconds(4_200))
    }

    @Test("a server that sends no head fails by the endpoint's deadline")
    func headDeadline() async throws {
        let server = try FaultServer([.readRequest, .waitForHangUp])
        defer { server.stop() }
        let client = Self.client(server.baseURL, timeout: .milliseconds(300))
        let error = await networkError { _ = try await client.stream(Self.feed) }
        #expect(error?.code == .timedOut)
    }
}

/// What a hostile review of raw streams and JSON Lines found.
@Suite struct StreamReviewTests {
    @Test("a second task reading the same body fails plainly; the first goes on")
    func secondReader() async throws {
        let server = try FaultServer([
            .readRequest, .send(StreamTests.eventHead), .pause(.milliseconds(300)), .send("late"), .close,
        ])
        defer { server.stop() }
        let answer = try await StreamTests.client(server.baseURL).stream(StreamTests.feed)
        let first = Task { () -> Data in
            var all = Data()
            for try await piece in answer.body { all.append(piece) }
            return all
        }
        try await Task.sleep(for: .milliseconds(100))
        let error = await networkError { for try await _ in answer.body {} }
        #expect(error?.code == .invalidRequest)
        #expect(try await first.value == Data("late".utf8))
    }

    @Test("a reader busy for longer than the idle timeout is not failed for the time it was busy")
    func idleCountsFromTheWait() async throws {
        let server = try FaultServer([
            .readRequest, .send(StreamTests.eventHead), .send("a"), .pause(.milliseconds(900)), .send("b"), .close,
        ])
        defer { server.stop() }
        let options = StreamOptions(idleTimeout: .milliseconds(700))
        let answer = try await StreamTests.client(server.baseURL).stream(StreamTests.feed, options: options)
        var iterator = answer.body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("a".utf8))
        try await Task.sleep(for: .milliseconds(500))  // busy: the server is silent meanwhile
        #expect(try await iterator.next() == Data("b".utf8))
    }

    @Test(
        "JSON Lines over HTTP: lines cut across pieces, CRLF, a last line without LF; a bad line fails after the ones before"
    )
    func jsonLines() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
        let server = try FaultServer(script: { connection in
            connection == 0
                ? [
                    .readRequest, .send(head), .send("{\"n\":1,\"te"), .pause(.milliseconds(50)),
                    .send("xt\":\"a\"}\r\n\n{\"n\":2,\"text\":\"é"), .send("\"}"), .close,
                ]
                : [
                    .readRequest, .send(head), .send("{\"n\":1,\"text\":\"a\"}\nnot json\n{\"n\":3,\"text\":\"c\"}\n"),
                    .close,
                ]
        })
        defer { server.stop() }
        struct Line: Decodable, Sendable, Equatable {
            let n: Int
            let text: String
        }
        let client = StreamTests.client(server.baseURL)
        var lines: [Line] = []
        for try await line in client.lines(Endpoint<Line>.get("export", decoding: .json)) { lines.append(line) }
        #expect(lines == [Line(n: 1, text: "a"), Line(n: 2, text: "é")])
        var read: [Int] = []
        let error = await networkError {
            for try await line in client.lines(Endpoint<Line>.get("export", decoding: .json)) { read.append(line.n) }
        }
        #expect(read == [1])
        #expect(error?.code == .decodingFailed)
        #expect(client.activeRequestCount == 0)
    }
}

/// What a second hostile review found.
@Suite struct StreamSecondReviewTests {
    @Test("cancelAll() before a complete body was read throws rather than end it short")
    func cancelAfterTheWholeBodyArrived() async throws {
        let server = try FaultServer([.readRequest, .send(StreamTests.eventHead), .send("all of it"), .close])
        defer { server.stop() }
        let client = StreamTests.client(server.baseURL)
        let answer = try await client.stream(StreamTests.feed)
        #expect(await server.waitUntil { $0.connections.first?.isClosed == true })
        try await Task.sleep(for: .milliseconds(100))  // the transport has finished the body
        client.cancelAll()
        let error = await networkError { for try await _ in answer.body {} }
        #expect(error?.code == .cancelled)
    }

    @Test("an event stream left unread leaves the requests in flight at once on cancelAll()")
    func idleEventStreamCancelled() async throws {
        let server = try FaultServer([
            .readRequest, .send(StreamTests.eventHead), .send(EventStreamTests.events(1...2)), .waitForHangUp,
        ])
        defer { server.stop() }
        let client = StreamTests.client(server.baseURL)
        var iterator = client.events(EventStreamTests.chat, options: EventStreamTests.quick).makeAsyncIterator()
        #expect(try await iterator.next()?.data.n == 1)
        #expect(client.activeRequestCount == 1)
        client.cancelAll()
        #expect(client.activeRequestCount == 0)
        let error = await networkError { _ = try await iterator.next() }
        #expect(error?.code == .cancelled, "the event already read from the wire is not handed out")
    }

    @Test("the pause before a reconnection is a tenth of a second at least, whatever the server's retry")
    func pauseFloor() {
        let policy = StreamOptions.Reconnection()
        let lowest = policy.delay(attempt: 1, retry: 0) { $0.lowerBound }
        #expect(lowest >= .milliseconds(100))
        let highest = policy.delay(attempt: 3, retry: 0) { $0.upperBound }
        #expect(highest >= .milliseconds(400))
        let quick = StreamOptions.Reconnection(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(20))
        #expect(quick.delay(attempt: 1, retry: nil) { $0.lowerBound } == .milliseconds(20))
    }
}
