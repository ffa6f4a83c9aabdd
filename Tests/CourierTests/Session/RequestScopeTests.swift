import Foundation
import Testing

@testable import Courier

/// What a request learns when it checks its scope after the session's epoch ended.
@Suite struct RequestScopeTests {
    @Test("a request of an epoch the backend ended fails with the end's error, though the end also cancelled it")
    func endedByTheBackend() async throws {
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "a1", userID: "ann")), askUserCodes: [500])
        let epoch = await session.beginEpoch()
        let entry = InFlightRegistry().add(epoch: epoch.number)
        _ = await session.end(epoch, .init(status: 200, businessCode: 500), "The backend ended the session.")
        // What the end does to every request of the epoch (the client's registry holds them).
        entry.cancel()

        for scope in [
            RequestScope(epoch: epoch, entry: entry), RequestScope(epoch: await session.beginEpoch(), entry: entry),
        ] {
            let error = #expect(throws: NetworkError.self) { try scope.check("it began") }
            #expect(error?.code == .sessionExpired, "\(String(describing: error))")
            #expect(error?.businessCode == 500)
        }
        // Cancelled in an epoch that goes on: cancelled.
        let current = await session.beginEpoch()
        let cancelled = InFlightRegistry().add(epoch: current.number)
        cancelled.cancel()
        let error = #expect(throws: NetworkError.self) {
            try RequestScope(epoch: current, entry: cancelled).check("it began")
        }
        #expect(error?.code == .cancelled)
        #expect(throws: Never.self) {
            try RequestScope(epoch: current, entry: InFlightRegistry().add(epoch: current.number)).check("it began")
        }
    }
}
