import Foundation

/// The session's epochs: what work captures when it begins, how an epoch ends, and what it
/// leaves behind (see ``Session``).
extension Session {
    /// How an epoch ended: whether the backend ended it, with the answer that did, and when
    /// what it left was stopped and emptied (``endWork(of:purging:)``).
    struct Ending {
        let epoch: UInt64
        let byBackend: Bool
        let cause: Cause?
        let settled = SharedOutcome<Void>()
    }

    /// What an epoch leaves behind when it ends: its ending, the clients whose work belonged to
    /// it, and its renewal's task.
    struct EndedEpoch {
        let ending: Ending
        let clients: [NetworkClient]
        let renewal: Task<Void, Never>?
    }

    /// Moves to a new epoch in which `credential` is signed in, and returns what the old one
    /// left. When the backend ended it, `endedByBackend`, with the answer `cause` that did.
    /// Called with `lock` held.
    func advance(to credential: Credential?, endedByBackend: Bool = false, cause: Cause? = nil) -> EndedEpoch {
        let ending = Ending(epoch: state.epoch, byBackend: endedByBackend, cause: cause)
        state.endings = Array((state.endings + [ending]).suffix(16))
        state.epoch += 1
        state.credential = credential
        state.loaded = true
        state.issued = nil
        // The renewal under way belongs to the old epoch: no request of the new one joins it.
        let renewal = state.renewals.epochEnded()
        state.clients.removeAll { $0.client == nil }
        return EndedEpoch(ending: ending, clients: state.clients.compactMap(\.client), renewal: renewal)
    }

    /// Stops what an ended epoch left, at once: its renewal (a pause between attempts ends, and
    /// it stores nothing) and the requests its clients have under way; then, when `purging`,
    /// empties their caches (in tasks of their own, so a cancelled caller still empties them).
    /// A request of the epoch reports its end only once this is done (``settled(_:)``).
    func endWork(of ended: EndedEpoch, purging: Bool) async {
        ended.renewal?.cancel()
        let epoch = epochNumber
        for client in ended.clients { client.cancelWork(before: epoch) }
        if purging {
            for client in ended.clients {
                guard let cache = client.configuration.cache else { continue }
                await Task { try? await cache.removeAll() }.value
            }
        }
        ended.ending.settled.finish(.success(()))
    }

    /// Waits until what epoch `epoch` left was stopped and emptied, if it ended.
    func settled(_ epoch: UInt64) async {
        guard let ending = lock.withLock({ state.endings.last { $0.epoch == epoch } }) else { return }
        _ = try? await ending.settled.value(whileWaitingFor: "the end of the session")
    }

    /// The current epoch's number.
    var epochNumber: UInt64 { lock.withLock { state.epoch } }

    /// How many refreshes and silent logins are still running, those of ended epochs too (for
    /// this package's tests: one that a logout stopped ends on its own).
    package var renewalsRunning: Int { lock.withLock { state.renewals.renewalsRunning } }

    /// The epoch as it is now; its owner is unknown while the store has not been read.
    func currentEpoch() -> SessionEpoch {
        lock.withLock { epochLocked() }
    }

    /// The epoch as it is now, after reading the store if this is the first request; its owner
    /// is unknown when the store cannot be read.
    func beginEpoch() async -> SessionEpoch {
        if let epoch = lock.withLock({ state.loaded ? epochLocked() : nil }) { return epoch }
        try? await load()
        return currentEpoch()
    }

    private func epochLocked() -> SessionEpoch {
        let owner = state.loaded ? state.credential.map { "user " + ($0.userID ?? "") } ?? "nobody" : nil
        return SessionEpoch(number: state.epoch, owner: owner, session: self)
    }

    /// The error of work from an epoch that is over.
    func endError(of epoch: UInt64, while step: String) -> NetworkError {
        lock.withLock { endErrorLocked(epoch, step) }
    }

    /// ``endError(of:while:)`` with `lock` held: ``NetworkError/Code/sessionExpired`` with the
    /// answer that ended it when the backend did, ``NetworkError/Code/cancelled`` otherwise.
    func endErrorLocked(_ epoch: UInt64, _ step: String) -> NetworkError {
        guard let ending = state.endings.last(where: { $0.epoch == epoch }), ending.byBackend else {
            return NetworkError(.cancelled, "The session changed (a logout or another login) while \(step).")
        }
        var error = NetworkError(.sessionExpired, "The backend ended the session while \(step).")
        error.status = ending.cause?.status
        error.businessCode = ending.cause?.businessCode
        return error
    }

    /// Reads the store, unless it was read or written already; one write or read of the store
    /// at a time, so a login under way is not undone by a read that began before it.
    func load() async throws(NetworkError) {
        guard !lock.withLock({ state.loaded }) else { return }
        try await writes.run { await loadHoldingWrites() }.get()
    }

    /// ``load()`` for a caller inside `writes`.
    func loadHoldingWrites() async -> Result<Void, NetworkError> {
        guard !lock.withLock({ state.loaded }) else { return .success(()) }
        let stored: Credential?
        do {
            stored = try await store.credential()
        } catch is CancellationError {
            return .failure(NetworkError(.cancelled, "The request was cancelled while the stored credential was read."))
        } catch {
            return .failure(NetworkError(.credentialStore, "Reading the stored credential failed.", underlying: error))
        }
        lock.withLock {
            guard !state.loaded else { return }
            state.credential = stored
            _ = state.renewals.changed(isLogIn: false)
            state.loaded = true
        }
        return .success(())
    }

    /// Makes `client`'s requests and cache part of the session.
    func attach(_ client: NetworkClient) {
        lock.withLock {
            state.clients.removeAll { $0.client == nil }
            state.clients.append(WeakClient(client: client))
        }
    }

    /// A client a session serves, held weakly: the client holds its session.
    struct WeakClient {
        weak var client: NetworkClient?
    }
}

/// The session as a piece of work found it when it began: its epoch, and who was signed in.
struct SessionEpoch: Sendable {
    let number: UInt64
    /// Who the cache keeps this epoch's answers for (`user <ID>`, or `nobody`); `nil` when the
    /// store could not be read, so the cache is not used.
    let owner: String?
    let session: Session

    /// Whether the session is still in this epoch.
    var isCurrent: Bool { session.epochNumber == number }

    /// Throws ``NetworkError/Code/cancelled`` (``NetworkError/Code/sessionExpired`` when the
    /// backend ended it) once the session has left this epoch.
    /// - Parameter step: What the work was doing, for the message: "the request was sent".
    func check(_ step: @autoclosure () -> String) throws(NetworkError) {
        guard !isCurrent else { return }
        throw session.endError(of: number, while: step())
    }
}
