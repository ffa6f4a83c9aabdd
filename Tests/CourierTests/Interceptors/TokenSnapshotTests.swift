import Foundation
import Testing

@testable import Courier

/// The token layer's read of a store without waiting for an actor, which most requests take.
@Suite struct TokenSnapshotTests {
    static func refresher(_ store: any TokenStore) -> TokenRefresher {
        TokenRefresher(
            store: store, fetch: { _ in Credential(accessToken: "fetched") }, attempts: 1, backoff: .zero, limit: 5,
            window: .seconds(60), leeway: .seconds(30))
    }

    @Test("an in-memory store's valid token is read at once; none, or one expiring within the leeway, is not")
    func inMemory() async {
        let store = InMemoryTokenStore(credential: Credential(accessToken: "a"))
        let refresher = Self.refresher(store)
        #expect(refresher.credentialWithoutWaiting()?.accessToken == "a")
        await store.setCredential(Credential(accessToken: "b", expiresAt: Date().addingTimeInterval(3600)))
        #expect(refresher.credentialWithoutWaiting()?.accessToken == "b")
        await store.setCredential(Credential(accessToken: "c", expiresAt: Date().addingTimeInterval(10)))
        #expect(refresher.credentialWithoutWaiting() == nil, "expires within the leeway: the refresher decides")
        await store.setCredential(nil)
        #expect(refresher.credentialWithoutWaiting() == nil, "logged out")
        #expect(await store.replaceCredential(nil, with: Credential(accessToken: "d")))
        #expect(!(await store.replaceCredential(nil, with: Credential(accessToken: "e"))), "no longer nil")
        #expect(refresher.credentialWithoutWaiting()?.accessToken == "d")
    }

    /// A store of the app's own: it can only be read by waiting for it.
    actor OwnStore: TokenStore {
        func credential() async throws -> Credential? { Credential(accessToken: "own") }
        func setCredential(_ credential: Credential?) async throws {}
    }

    @Test("a store of the app's own is always read through the refresher")
    func ownStore() async throws {
        let refresher = Self.refresher(OwnStore())
        #expect(refresher.credentialWithoutWaiting() == nil)
        let client = NetworkClient(configuration: .init(baseURL: URL(string: "http://127.0.0.1:9/")!))
        let handle = InterceptorContext(client: client).client(skipping: [.token])
        #expect(try await refresher.currentCredential(client: handle).accessToken == "own")
    }
}
