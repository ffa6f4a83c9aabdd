import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Server-Sent Events over real HTTP on the transport under test: decoding, reconnection with
/// `Last-Event-ID`, and the session on every connection.
@Suite struct EventStreamTests {
    struct Token: Decodable, Sendable, Equatable {
        let n: Int
    }

    static let head = StreamTests.eventHead
    static let chat = Endpoint<Token>.get("chat", decoding: .json)
    /// Quick reconnection for tests: a pause of at most 20 ms.
    static let quick = StreamOptions(
        reconnection: .init(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(20)))

    static func events(_ range: ClosedRange<Int>) -> String {
        range.map { "id: \($0)\ndata: {\"n\":\($0)}\n\n" }.joined()
    }

    static func collect<P>(_ stream: EventStream<P>, limit: Int = 10_000) async throws -> [ServerSentEvent<P>] {
        var events: [ServerSentEvent<P>] = []
        for try await event in stream {
            events.append(event)
            if events.count >= limit { break }
        }
        return events
    }

    @Test("events decode as the endpoint says, with their type, ID and text")
    func decodes() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.head),
            .send("event: token\nid: 1\ndata: {\"n\":1}\n\n: heartbeat\n\ndata: {\"n\":2}\n\n"), .close,
        ])
        defer { server.stop() }
        let client = StreamTests.client(server.baseURL)
        let options = StreamOptions(reconnection: .never)
        let events = try await Self.collect(client.events(Self.chat, options: options))
        #expect(events.map(\.data) == [Token(n: 1), Token(n: 2)])
        #expect(events.map(\.type) == ["token", "message"])
        #expect(events.map(\.id) == ["1", "1"])
        #expect(events.map(\.text) == ["{\"n\":1}", "{\"n\":2}"])
        let request = try #require(server.requestHeads.first)
        #expect(request.headers["Accept"] == "text/event-stream")
        #expect(client.activeRequestCount == 0)
    }

    @Test("a dropped connection comes back with Last-Event-ID, and an event sent again is read once")
    func reconnects() async throws {
        let server = try FaultServer(script: { connection in
            switch connection {
            case 0: [.readRequest, .send(Self.head), .send(Self.events(1...2)), .close]
            case 1: [.readRequest, .send(Self.head), .send(Self.events(2...3)), .reset]
            default: [.readRequest, .respond(status: 204), .close]
            }
        })
        defer { server.stop() }
        let events = try await Self.collect(StreamTests.client(server.baseURL).events(Self.chat, options: Self.quick))
        #expect(events.map(\.data.n) == [1, 2, 3])
        let heads = server.requestHeads
        #expect(heads.count == 3)
        #expect(heads.first?.headers["Last-Event-ID"] == nil)
        #expect(heads.dropFirst().first?.headers["Last-Event-ID"] == "2")
        #expect(heads.last?.headers["Last-Event-ID"] == "3")
    }

    @Test("the server's retry: sets the pause before the next connection")
    func honoursRetry() async throws {
        let server = try FaultServer(script: { connection in
            connection == 0
                ? [.readRequest, .send(Self.head), .send("retry: 30\n" + Self.events(1...1)), .close]
                : [.readRequest, .respond(status: 204), .close]
        })
        defer { server.stop() }
        // Without the server's 30 ms, the pause could last up to a minute.
        let options = StreamOptions(reconnection: .init(initialDelay: .seconds(60), maximumDelay: .seconds(60)))
        let started = ContinuousClock.now
        let events = try await Self.collect(StreamTests.client(server.baseURL).events(Self.chat, options: options))
        #expect(events.count == 1)
        // Far under the minute the backoff alone could pause; a loaded machine (Linux URLSession
        // under the whole suite) has taken 5 s.
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    @Test("a 4xx other than 401, 408 and 429 ends the stream with its error, without another connection")
    func stopsOnClientError() async throws {
        let server = try FaultServer([.readRequest, .respond(status: 404, body: Data("gone".utf8)), .close])
        defer { server.stop() }
        let error = await networkError {
            _ = try await Self.collect(StreamTests.client(server.baseURL).events(Self.chat, options: Self.quick))
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 404)
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.requestHeads.count == 1)
    }

    @Test("a 503 and a refused connection are tried again; the attempt limit ends the stream with the last error")
    func triesAgainThenGivesUp() async throws {
        let server = try FaultServer(script: { _ in [.readRequest, .respond(status: 503), .close] })
        defer { server.stop() }
        var options = Self.quick
        options.reconnection.maximumAttempts = 3
        let error = await networkError {
            _ = try await Self.collect(StreamTests.client(server.baseURL).events(Self.chat, options: options))
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 503)
        #expect(server.requestHeads.count == 4, "the first connection and three more")
    }

    @Test("an answer that is not an event stream ends the stream plainly")
    func notAnEventStream() async throws {
        let server = try FaultServer([
            .readRequest, .respond(headers: ["Content-Type": "text/html"], body: Data("<html>".utf8)), .close,
        ])
        defer { server.stop() }
        let error = await networkError {
            _ = try await Self.collect(StreamTests.client(server.baseURL).events(Self.chat, options: Self.quick))
        }
        #expect(error?.code == .unacceptableContentType)
    }

    @Test("a cancelled reader's connection closes at once and never comes back")
    func cancelledReader() async throws {
        let server = try FaultServer([.readRequest, .send(Self.head), .send(Self.events(1...1)), .waitForHangUp])
        defer { server.stop() }
        let client = StreamTests.client(server.baseURL)
        let first = AsyncStream<Void>.makeStream()
        let reader = Task {
            for try await _ in client.events(Self.chat, options: Self.quick) { first.continuation.yield() }
        }
        for await _ in first.stream { break }
        reader.cancel()
        let error = await networkError { try await reader.value }
        #expect(error?.code == .cancelled)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.connections.count == 1)
        #expect(client.activeRequestCount == 0)
    }

    @Test("cancelAll() during the pause before a reconnection ends the stream at once")
    func cancelAllDuringPause() async throws {
        let server = try FaultServer([.readRequest, .send(Self.head), .send(Self.events(1...1)), .close])
        defer { server.stop() }
        let client = StreamTests.client(server.baseURL)
        let options = StreamOptions(reconnection: .init(initialDelay: .seconds(60), maximumDelay: .seconds(60)))
        let reader = Task { try await Self.collect(client.events(Self.chat, options: options)) }
        #expect(await server.waitUntil { $0.connections.first?.isClosed == true })
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        client.cancelAll()
        let error = await networkError { _ = try await reader.value }
        #expect(error?.code == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(server.connections.count == 1)
    }

    @Test("1,000 events, the token refused at event 500: every event once, in order, after one refresh")
    func tokenRefusedMidStream() async throws {
        let server = try FaultServer(script: { connection in
            switch connection {
            case 0: [.readRequest, .send(Self.head), .send(Self.events(1...500)), .close]
            case 1: [.readRequest, .respond(status: 401), .close]
            case 2: [.readRequest, .send(Self.head), .send(Self.events(501...1000)), .close]
            default: [.readRequest, .respond(status: 204), .close]
            }
        })
        defer { server.stop() }
        let refreshes = Counter()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old", refreshToken: "r")),
            refresh: { _ in
                _ = refreshes.increment()
                return Credential(accessToken: "new", refreshToken: "r2")
            })
        let client = StreamTests.client(server.baseURL, session: session)
        let events = try await Self.collect(client.events(Self.chat, options: Self.quick))
        #expect(events.map(\.data.n) == Array(1...1000))
        #expect(refreshes.current == 1)
        let heads = server.requestHeads
        let seen = heads.map { "\($0.connection) \($0.headers["token"] ?? "-") \($0.headers["Last-Event-ID"] ?? "-")" }
        #expect(heads.map { $0.headers["token"] } == ["old", "old", "new", "new"], "\(seen)")
        #expect(heads.dropFirst().map { $0.headers["Last-Event-ID"] } == ["500", "500", "1000"], "\(seen)")
    }

    @Test("an event with a log-in code logs in once without the user, then the stream goes on from that event")
    func businessCodeInEvent() async throws {
        @Sendable func envelope(_ n: Int, code: Int = 0) -> String {
            "id: \(n)\ndata: {\"code\":\(code),\"msg\":\"\",\"data\":{\"n\":\(n)}}\n\n"
        }
        let server = try FaultServer(script: { connection in
            switch connection {
            case 0:
                [
                    .readRequest, .send(Self.head), .send((1...3).map { envelope($0) }.joined()),
                    .send(envelope(4, code: 99)), .send(envelope(5)), .waitForHangUp,
                ]
            case 1: [.readRequest, .send(Self.head), .send((5...6).map { envelope($0) }.joined()), .close]
            default: [.readRequest, .respond(status: 204), .close]
            }
        })
        defer { server.stop() }
        let logIns = Counter()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old")), logInCodes: [99],
            logIn: { _ in
                _ = logIns.increment()
                return Credential(accessToken: "again")
            })
        let client = StreamTests.client(server.baseURL, session: session)
        let endpoint = Endpoint<Token>.get("chat")
        let events = try await Self.collect(client.events(endpoint, options: Self.quick))
        #expect(events.map(\.data.n) == [1, 2, 3, 5, 6])
        #expect(logIns.current == 1)
        let heads = server.requestHeads
        #expect(heads.map { $0.headers["token"] } == ["old", "again", "again"])
        #expect(heads.dropFirst().first?.headers["Last-Event-ID"] == "4")
    }

    @Test("an event with another failing code ends the stream with the business error, after the events before it")
    func businessErrorInEvent() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.head),
            .send("data: {\"code\":0,\"data\":{\"n\":1}}\n\ndata: {\"code\":7,\"msg\":\"quota\",\"data\":null}\n\n"),
            .waitForHangUp,
        ])
        defer { server.stop() }
        var read: [Int] = []
        let error = await networkError {
            for try await event in StreamTests.client(server.baseURL).events(Endpoint<Token>.get("chat")) {
                read.append(event.data.n)
            }
        }
        #expect(read == [1])
        #expect(error?.code == .business)
        #expect(error?.businessCode == 7)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
    }

    @Test("silence past the idle timeout counts as a drop: the stream connects again")
    func idleTimeoutReconnects() async throws {
        let server = try FaultServer(script: { connection in
            connection == 0
                ? [.readRequest, .send(Self.head), .send(Self.events(1...1)), .waitForHangUp]
                : [.readRequest, .send(Self.head), .send(Self.events(2...2)), .close]
        })
        defer { server.stop() }
        var options = Self.quick
        options.idleTimeout = .milliseconds(300)
        options.reconnection.maximumAttempts = 1
        let events = try await Self.collect(
            StreamTests.client(server.baseURL).events(Self.chat, options: options), limit: 2)
        #expect(events.map(\.data.n) == [1, 2])
        #expect(server.requestHeads.last?.headers["Last-Event-ID"] == "1")
    }
}

/// Many streams dropped at once do not come back at once.
@Suite struct ReconnectionSpreadTests {
    /// A transport with room for 100 connections to one host (16 by default).
    static func roomyTransport() throws -> any Transport {
        if TestTransport.isURLSession {
            let configuration = URLSessionTransport.defaultSessionConfiguration()
            configuration.httpMaximumConnectionsPerHost = 128
            return URLSessionTransport(configuration: configuration)
        }
        #if os(Linux)
            return try CurlTransport(options: .init(maximumConnectionsPerHost: 128))
        #else
            let configuration = URLSessionTransport.defaultSessionConfiguration()
            configuration.httpMaximumConnectionsPerHost = 128
            return URLSessionTransport(configuration: configuration)
        #endif
    }

    @Test("100 streams dropped at once reconnect spread over the backoff window: over 3 s, at most half in any second")
    func spread() async throws {
        let streams = 100
        let server = try FaultServer(script: { connection in
            connection < streams
                ? [
                    .readRequest, .send(StreamTests.eventHead), .send(EventStreamTests.events(1...1)),
                    .pause(.milliseconds(500)), .close,
                ]
                : [.readRequest, .respond(status: 204), .close]
        })
        defer { server.stop() }
        // Timed where Courier hands each connection to the transport: on a loaded machine Linux
        // URLSession's one work thread opens connections in bursts of its own.
        let sends = SendTimes(try Self.roomyTransport())
        let client = NetworkClient(configuration: .init(baseURL: server.baseURL, transport: sends))
        let options = StreamOptions(reconnection: .init(initialDelay: .seconds(6), maximumDelay: .seconds(6)))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<streams {
                group.addTask {
                    try await EventStreamTests.collect(client.events(EventStreamTests.chat, options: options)).count
                }
            }
            for try await count in group { #expect(count == 1) }
        }
        let connections = server.connections
        #expect(connections.count == 2 * streams)
        // The most reconnections within any one second, wherever it starts.
        let times = Array(sends.times.sorted().dropFirst(streams))
        #expect(times.count == streams)
        var busiest = 0
        var start = times.startIndex
        for end in times.indices {
            while times[end] - times[start] >= .seconds(1) { start += 1 }
            busiest = max(busiest, end - start + 1)
        }
        let spread = (times.last ?? .now) - (times.first ?? .now)
        // Drawn over 6 s, about 17 fall in a second and the busiest second holds 25-30; a
        // machine that stalls bunches a few more. Reconnecting at once puts them all in one.
        #expect(busiest <= streams / 2, "\(busiest) reconnections within one second; all of them within \(spread)")
        #expect(spread >= .seconds(3), "all \(streams) reconnections within \(spread)")
    }
}

/// A transport that notes when each request is handed to it.
///
/// `@unchecked Sendable`: `recorded` is guarded by `lock`.
final class SendTimes: Transport, @unchecked Sendable {
    private let base: any Transport
    private let lock = NSLock()
    private var recorded: [ContinuousClock.Instant] = []

    init(_ base: any Transport) { self.base = base }

    var times: [ContinuousClock.Instant] { lock.withLock { recorded } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { recorded.append(.now) }
        return try await base.send(request)
    }
}

/// `LoopbackServer` routes that stream, read by the client.
@Suite struct LoopbackStreamTests {
    @Test("a route writes events when the test says, drops the connection, and the stream resumes after the last one")
    func writtenWhenTheTestSays() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (signals, signal) = AsyncStream<Void>.makeStream()
        let connections = Counter()
        server.route("/chat") { request in
            let first = connections.increment() == 1
            let after = Int(request.headers["Last-Event-ID"] ?? "") ?? 0
            return .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
                guard first else {
                    for n in (after + 1)...4 { writer.event(#"{"n":\#(n)}"#, id: String(n)) }
                    return
                }
                var iterator = signals.makeAsyncIterator()
                for n in 1...2 {
                    await iterator.next()
                    writer.event(#"{"n":\#(n)}"#, id: String(n))
                }
                writer.drop()
            }
        }
        let client = StreamTests.client(server.baseURL)
        var iterator = client.events(EventStreamTests.chat, options: EventStreamTests.quick).makeAsyncIterator()
        signal.yield()
        #expect(try await iterator.next()?.data.n == 1)
        signal.yield()
        #expect(try await iterator.next()?.data.n == 2)
        #expect(try await iterator.next()?.data.n == 3)
        #expect(try await iterator.next()?.data.n == 4)
        #expect(server.requests.map { $0.headers["Last-Event-ID"] } == [nil, "2"])
    }
}

/// What a hostile review of the event stream found, each with its scenario.
@Suite struct EventStreamReviewTests {
    static let head = StreamTests.eventHead

    @Test("a server that opens every connection with a log-in code gets one silent login, then the business error")
    func sessionAnswerLoop() async throws {
        let code99 = "data: {\"code\":99,\"msg\":\"log in\",\"data\":null}\n\n"
        let server = try FaultServer(script: { _ in [.readRequest, .send(Self.head), .send(code99), .waitForHangUp] })
        defer { server.stop() }
        let logIns = Counter()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old")), logInCodes: [99],
            logIn: { _ in Credential(accessToken: "again-\(logIns.increment())") })
        let client = StreamTests.client(server.baseURL, session: session)
        let error = await networkError {
            _ = try await EventStreamTests.collect(
                client.events(Endpoint<EventStreamTests.Token>.get("chat"), options: EventStreamTests.quick))
        }
        #expect(error?.code == .business)
        #expect(error?.businessCode == 99)
        #expect(logIns.current == 1)
        #expect(server.requestHeads.count == 2)
    }

    @Test("the events before an event past the size limit are read, then the stream fails")
    func eventsBeforeTooLarge() async throws {
        let big = "data: " + String(repeating: "x", count: 200) + "\n\n"
        let server = try FaultServer([
            .readRequest, .send(Self.head), .send(EventStreamTests.events(1...2) + big), .waitForHangUp,
        ])
        defer { server.stop() }
        var read: [Int] = []
        let options = StreamOptions(maximumElementSize: 64)
        let error = await networkError {
            for try await event in StreamTests.client(server.baseURL).events(EventStreamTests.chat, options: options) {
                read.append(event.data.n)
            }
        }
        #expect(read == [1, 2])
        #expect(error?.code == .responseTooLarge)
    }

    @Test("events of one connection that share an ID are all read")
    func sharedIDInOneConnection() async throws {
        let chunk = (1...3).map { "id: msg-42\ndata: {\"n\":\($0)}\n\n" }.joined()
        let server = try FaultServer([.readRequest, .send(Self.head), .send(chunk), .close])
        defer { server.stop() }
        let options = StreamOptions(reconnection: .never)
        let events = try await EventStreamTests.collect(
            StreamTests.client(server.baseURL).events(EventStreamTests.chat, options: options))
        #expect(events.map(\.data.n) == [1, 2, 3])
    }

    @Test("a server that closes cleanly after each event is not counted as failing")
    func cleanClosesAfterEvents() async throws {
        let server = try FaultServer(script: { connection in
            connection < 5
                ? [
                    .readRequest, .send(Self.head), .send(EventStreamTests.events((connection + 1)...(connection + 1))),
                    .close,
                ]
                : [.readRequest, .respond(status: 204), .close]
        })
        defer { server.stop() }
        var options = EventStreamTests.quick
        options.reconnection.maximumAttempts = 1
        let events = try await EventStreamTests.collect(
            StreamTests.client(server.baseURL).events(EventStreamTests.chat, options: options))
        #expect(events.map(\.data.n) == [1, 2, 3, 4, 5])
    }

    @Test("an id: line without data moves the resume point on")
    func idOnlyCheckpoint() async throws {
        let server = try FaultServer(script: { connection in
            connection == 0
                ? [.readRequest, .send(Self.head), .send(EventStreamTests.events(1...1) + "id: 7\n\n"), .close]
                : [.readRequest, .respond(status: 204), .close]
        })
        defer { server.stop() }
        _ = try await EventStreamTests.collect(
            StreamTests.client(server.baseURL).events(EventStreamTests.chat, options: EventStreamTests.quick))
        #expect(server.requestHeads.last?.headers["Last-Event-ID"] == "7")
    }
}

/// Event streams cut by the network where a parser is most likely to slip: a CRLF split
/// between two writes, a UTF-8 character split between two writes, a connection dropped in the
/// middle of an event.
@Suite struct EventStreamSplitTests {
    static let gap = FaultServer.Step.pause(.milliseconds(30))

    @Test("a CRLF and a UTF-8 character split across writes give the same events")
    func splitBytes() async throws {
        let euro = Array("€".utf8)
        let server = try FaultServer([
            .readRequest, .send(StreamTests.eventHead),
            .send("id: 1\r\ndata: first\r"), Self.gap, .send("\n"),
            .send("\r\n"), Self.gap,
            .send(Data(Array("id: 2\r\ndata: ".utf8) + euro.prefix(1))), Self.gap,
            .send(Data(euro.dropFirst())), .send("x\r\n\r"), Self.gap, .send("\n"), .close,
        ])
        defer { server.stop() }
        let options = StreamOptions(reconnection: .never)
        var events: [ServerSentEvent<String>] = []
        for try await event in StreamTests.client(server.baseURL).events(
            Endpoint<String>.get("chat", decoding: .text), options: options)
        {
            events.append(event)
        }
        #expect(events.map(\.id) == ["1", "2"])
        #expect(events.map(\.data) == ["first", "€x"])
    }

    @Test("a connection dropped in the middle of an event: the half event is dropped and comes again whole")
    func dropMidEvent() async throws {
        let server = try FaultServer(script: { connection in
            switch connection {
            case 0:
                [
                    .readRequest, .send(StreamTests.eventHead),
                    .send(EventStreamTests.events(1...1) + "id: 2\ndata: {\"n\""), .reset,
                ]
            case 1: [.readRequest, .send(StreamTests.eventHead), .send(EventStreamTests.events(2...2)), .close]
            default: [.readRequest, .respond(status: 204), .close]
            }
        })
        defer { server.stop() }
        let events = try await EventStreamTests.collect(
            StreamTests.client(server.baseURL).events(EventStreamTests.chat, options: EventStreamTests.quick))
        #expect(events.map(\.data.n) == [1, 2])
        #expect(server.requestHeads.dropFirst().first?.headers["Last-Event-ID"] == "1")
    }
}
