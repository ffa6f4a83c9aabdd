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
        let layer = TokenInterceptor(store: store, fetchAttempts: 1) { refresh in
            _ = fetches.increment()
            struct Answer: Decodable, Sendable { let accessToken, refreshToken: String }
            let answer = try await refresh.client.send(
                Endpoint<Answer>.get("refresh", query: ["refreshToken": refresh.previous?.refreshToken ?? ""]))
            return Credential(
                accessToken: answer.accessToken, refreshToken: answer.refreshToken,
                expiresAt: Date().addingTimeInterval(3600))
        }
        return NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, interceptors: [layer], transport: transport))
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

    /// A store whose reads or writes fail, as a keychain's can.
    struct FailingStore: TokenStore {
        struct KeychainError: Error {}
        let failsReading: Bool
        func credential() async throws -> Credential? {
            if failsReading { throw KeychainError() }
            return nil
        }
        func setCredential(_ credential: Credential?) async throws { throw KeychainError() }
    }

    @Test("a store that cannot be read fails the request with tokenRefreshFailed, and nothing is sent")
    func storeReadFails() async throws {
        let transport = Self.transport()
        let fetches = Counter()
        let client = Self.client(store: FailingStore(failsReading: true), transport: transport, fetches: fetches)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(error?.underlying is FailingStore.KeychainError)
        #expect(transport.requests.isEmpty)
        #expect(fetches.increment() == 1, "no fetch")
    }

    @Test("a store that cannot be written fails the refresh once: the fetch is not repeated, nothing is sent")
    func storeWriteFails() async throws {
        let transport = MockTransport { _ in try .envelope(data: ["accessToken": "a2", "refreshToken": "r2"]) }
        let fetches = Counter()
        let layer = TokenInterceptor(store: FailingStore(failsReading: false), fetchAttempts: 3) { _ in
            _ = fetches.increment()
            return Credential(accessToken: "a2")
        }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, interceptors: [layer], transport: transport))
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(error?.underlying is FailingStore.KeychainError)
        #expect(fetches.increment() == 2, "one fetch, then this probe")
        #expect(transport.requests.isEmpty)
    }

    @Test("printing, debug-printing or dumping a credential never shows its tokens")
    func redactedWhenPrinted() {
        let credential = Credential(
            accessToken: "secret-access", refreshToken: "secret-refresh", expiresAt: Date(timeIntervalSince1970: 0))
        var dumped = ""
        dump(credential, to: &dumped)
        for text in [String(describing: credential), String(reflecting: credential), "\(credential)", dumped] {
            #expect(!text.contains("secret"), "\(text)")
            #expect(text.contains("refreshToken: <redacted>") && text.contains("1970"), "\(text)")
        }
        #expect(!"\(Credential(accessToken: "a"))".contains("refreshToken"))
    }
}
