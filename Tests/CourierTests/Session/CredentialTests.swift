import Courier
import CourierTesting
import Foundation
import Testing

/// Credentials with an expiry and a refresh token, and token stores that fail.
@Suite struct CredentialTests {
    /// A backend answering `refresh` (a new access token for refresh token `r1`, once) and
    /// `data` (the token it was sent).
    static func transport() -> MockTransport {
        MockTransport { request in
            if request.url.path.hasSuffix("/refresh") {
                guard request.query["refreshToken"] == "r1" else { return .init(status: 401) }
                return try .envelope(data: ["accessToken": "a2", "refreshToken": "r2"])
            }
            return try .envelope(data: request.headers["token"] ?? "")
        }
    }

    static func client(store: any TokenStore, transport: MockTransport, fetches: Counter) -> NetworkClient {
        let session = Session(
            store: store, limits: .init(refreshAttempts: 1),
            refresh: { refresh in
                _ = fetches.increment()
                struct Answer: Decodable, Sendable { let accessToken, refreshToken: String }
                let answer = try await refresh.client.send(
                    Endpoint<Answer>.get("refresh", query: ["refreshToken": refresh.previous.refreshToken ?? ""]))
                return Credential(
                    accessToken: answer.accessToken, refreshToken: answer.refreshToken,
                    expiresAt: Date().addingTimeInterval(3600))
            })
        return NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session, transport: transport))
    }

    @Test("a credential that expires within the leeway is refreshed before it is sent, with its refresh token")
    func refreshedBeforeExpiry() async throws {
        let store = InMemoryTokenStore(
            credential: Credential(accessToken: "a1", refreshToken: "r1", expiresAt: Date().addingTimeInterval(10)))
        let transport = Self.transport()
        let fetches = Counter()
        let client = Self.client(store: store, transport: transport, fetches: fetches)
        #expect(try await client.send(Endpoint<String>.get("data")) == "a2")
        #expect(try await client.send(Endpoint<String>.get("data")) == "a2")
        #expect(fetches.increment() == 2, "one refresh, then this probe")
        #expect(!transport.requests.contains { $0.headers["token"] == "a1" }, "the expiring token never went out")
        let stored = try #require(await store.credential())
        #expect(stored.accessToken == "a2" && stored.refreshToken == "r2")
    }

    @Test("a credential far from its expiry, or without one, is sent as it is")
    func notYetExpiring() async throws {
        for expiry in [Date().addingTimeInterval(3600), nil] {
            let store = InMemoryTokenStore(
                credential: Credential(accessToken: "a1", refreshToken: "r1", expiresAt: expiry))
            let fetches = Counter()
            let client = Self.client(store: store, transport: Self.transport(), fetches: fetches)
            #expect(try await client.send(Endpoint<String>.get("data")) == "a1")
            #expect(fetches.increment() == 1, "no refresh")
        }
    }

    /// A store whose reads or writes fail, as a keychain's can; it holds an expired credential.
    struct FailingStore: TokenStore {
        struct KeychainError: Error {}
        let failsReading: Bool
        func credential() async throws -> Credential? {
            if failsReading { throw KeychainError() }
            return Credential(accessToken: "a1", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 0))
        }
        func setCredential(_ credential: Credential?) async throws { throw KeychainError() }
    }

    @Test("a store that cannot be read fails the request with credentialStore, and nothing is sent")
    func storeReadFails() async throws {
        let transport = Self.transport()
        let fetches = Counter()
        let client = Self.client(store: FailingStore(failsReading: true), transport: transport, fetches: fetches)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .credentialStore)
        #expect(error?.underlying is FailingStore.KeychainError)
        #expect(transport.requests.isEmpty)
        #expect(fetches.current == 0, "no refresh")
    }

    @Test("a store that cannot be written fails the refresh once: it is not repeated, and nothing more is sent")
    func storeWriteFails() async throws {
        let transport = Self.transport()
        let fetches = Counter()
        let client = Self.client(store: FailingStore(failsReading: false), transport: transport, fetches: fetches)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .credentialStore)
        #expect(error?.underlying is FailingStore.KeychainError)
        #expect(fetches.current == 1, "one refresh")
        #expect(transport.requests.map(\.url.lastPathComponent) == ["refresh"], "the refresh, and no data request")
    }

    @Test("a login or logout whose store cannot be written says so; a failed login changes nothing")
    func logInAndOutStoreFailures() async throws {
        let session = Session(store: FailingStore(failsReading: false))
        let events = session.events()
        let login = await networkError { try await session.logIn(Credential(accessToken: "b1")) }
        #expect(login?.code == .credentialStore)
        #expect(try await session.credential()?.accessToken == "a1", "still the stored one")
        let logout = await networkError { try await session.logOut() }
        #expect(logout?.code == .credentialStore)
        #expect(try await session.credential() == nil, "signed out in this process all the same")
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .loggedOut)
    }

    @Test("printing, debug-printing or dumping a credential never shows its tokens")
    func redactedWhenPrinted() {
        let credential = Credential(
            accessToken: "secret-access", refreshToken: "secret-refresh", expiresAt: Date(timeIntervalSince1970: 0),
            userID: "ann")
        var dumped = ""
        dump(credential, to: &dumped)
        for text in [String(describing: credential), String(reflecting: credential), "\(credential)", dumped] {
            #expect(!text.contains("secret"), "\(text)")
            #expect(
                text.contains("refreshToken: <redacted>") && text.contains("1970") && text.contains("ann"), "\(text)")
        }
        #expect(!"\(Credential(accessToken: "a"))".contains("refreshToken"))
    }
}
