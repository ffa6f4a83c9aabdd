import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A logout at each wait of an event stream: while it connects, while it reads, while it
/// pauses before connecting again. Each time the stream ends at once, its connection closes, and
/// nothing more is sent with the old token.
@Suite struct StreamSessionTests {
    static let head = StreamTests.eventHead
    static let chat = EventStreamTests.chat

    static func signedIn() -> Session {
        Session(store: InMemoryTokenStore(credential: Credential(accessToken: "ann", userID: "ann")))
    }

    static func expectEnded(_ reader: Task<[ServerSentEvent<EventStreamTests.Token>], any Error>) async {
        let error = await networkError { _ = try await reader.value }
        #expect(error?.code == .cancelled || error?.code == .sessionExpired, "\(String(describing: error))")
    }

    @Test("a logout while the stream reads closes it, and it never connects again")
    func logoutWhileReading() async throws {
        let server = try FaultServer([
            .readRequest, .send(Self.head), .send(EventStreamTests.events(1...1)), .waitForHangUp,
        ])
        defer { server.stop() }
        let session = Self.signedIn()
        let client = StreamTests.client(server.baseURL, session: session)
        let first = AsyncStream<Void>.makeStream()
        let reader = Task {
            var events: [ServerSentEvent<EventStreamTests.Token>] = []
            for try await event in client.events(Self.chat, options: EventStreamTests.quick) {
                events.append(event)
                first.continuation.yield()
            }
            return events
        }
        for await _ in first.stream { break }
        try await session.logOut()
        await Self.expectEnded(reader)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.requestHeads.count == 1)
        #expect(client.activeRequestCount == 0)
    }

    @Test("a logout while the stream waits for its answer's head ends it before any event")
    func logoutWhileConnecting() async throws {
        let server = try FaultServer([.readRequest, .pause(.seconds(30)), .send(Self.head), .waitForHangUp])
        defer { server.stop() }
        let session = Self.signedIn()
        let client = StreamTests.client(server.baseURL, session: session, timeout: .seconds(60))
        let reader = Task {
            try await EventStreamTests.collect(client.events(Self.chat, options: EventStreamTests.quick))
        }
        #expect(await server.waitUntil { $0.requestHeads.count == 1 })
        try await session.logOut()
        await Self.expectEnded(reader)
        #expect(await server.waitUntil { $0.connections.first?.closedByClient == true })
        #expect(server.requestHeads.count == 1)
    }

    @Test("a logout during the pause before a reconnection ends the stream at once, with nothing sent")
    func logoutWhilePausing() async throws {
        let server = try FaultServer([.readRequest, .send(Self.head), .send(EventStreamTests.events(1...1)), .close])
        defer { server.stop() }
        let session = Self.signedIn()
        let client = StreamTests.client(server.baseURL, session: session)
        let options = StreamOptions(reconnection: .init(initialDelay: .seconds(60), maximumDelay: .seconds(60)))
        let reader = Task { try await EventStreamTests.collect(client.events(Self.chat, options: options)) }
        #expect(await server.waitUntil { $0.connections.first?.isClosed == true })
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        try await session.logOut()
        await Self.expectEnded(reader)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(server.requestHeads.count == 1)
    }

    @Test("an account switch ends the old user's stream; the new user's stream carries the new token")
    func accountSwitch() async throws {
        let server = try FaultServer(script: { _ in
            [.readRequest, .send(Self.head), .send(EventStreamTests.events(1...1)), .waitForHangUp]
        })
        defer { server.stop() }
        let session = Self.signedIn()
        let client = StreamTests.client(server.baseURL, session: session)
        let first = AsyncStream<Void>.makeStream()
        let reader = Task {
            for try await _ in client.events(Self.chat, options: EventStreamTests.quick) { first.continuation.yield() }
            return [ServerSentEvent<EventStreamTests.Token>]()
        }
        for await _ in first.stream { break }
        try await session.logIn(Credential(accessToken: "bob", userID: "bob"))
        await Self.expectEnded(reader)
        var iterator = client.events(Self.chat, options: EventStreamTests.quick).makeAsyncIterator()
        _ = try await iterator.next()
        #expect(server.requestHeads.map { $0.headers["token"] } == ["ann", "bob"])
    }
}
