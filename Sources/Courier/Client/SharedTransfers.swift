import Foundation

/// Identical requests in flight that share one transfer: the first starts it, the others wait
/// for its answer. A waiter that is cancelled stops waiting at once; the transfer goes on for
/// the others, and is cancelled when the last waiter leaves.
///
/// Every caller waits in its own task and the transfer runs in one task of its own, so a
/// request that shares costs no more task hops than one that does not. Who waits for what is
/// ``SharedTransferState``'s to say; this class keeps it under a lock and runs the tasks.
final class SharedTransfers: Sendable {
    private typealias State = SharedTransferState<Task<Void, any Error>, SharedOutcome<HTTPResponse>>
    private let state = Locked(State())

    /// The number of callers waiting for a shared transfer that later identical requests can
    /// still join (not one detached by ``detachAll()``), all transfers together.
    var waiterCount: Int { state.withLock { $0.waiterCount } }

    /// Whether the transfer for `key` has its task, for tests.
    func hasStarted(_ key: [String]) -> Bool { state.withLock { $0.hasWork(key) } }

    /// The answer of the transfer for `key`: one in flight, or a new one made by `start`.
    /// - Parameters:
    ///   - key: What identical requests are matched by: the parts that tell them apart, the
    ///     session epoch among them.
    ///   - cancellation: Given what stops this caller's wait, once it waits; for
    ///     ``NetworkClient/cancelAll()`` and a logout.
    ///   - start: The transfer.
    ///   - joining: Called when the caller joins a transfer in flight rather than starting one.
    /// - Throws: The transfer's error, or ``NetworkError/Code/cancelled`` when the caller is
    ///   cancelled.
    func response(
        for key: [String], cancellation: @escaping (_ stop: @escaping @Sendable () -> Void) -> Void,
        start: @escaping @Sendable () async throws -> HTTPResponse, joining: () -> Void = {}
    ) async throws -> HTTPResponse {
        // A caller cancelled already starts nothing and joins nothing.
        guard !Task.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled before it was sent.")
        }
        let priority = Task.currentPriority
        let arrival = state.withLock { $0.arrive(key, priority: priority, make: { SharedOutcome() }) }
        switch arrival {
        case .join(let id, let outcome, let running):
            defer { leave(id) }
            // A caller of higher priority than the one that started it does not wait at the lower
            // priority. Outside the lock: an escalation runs handlers on this thread.
            if let running { escalate(running, to: priority) }
            joining()
            return try await outcome.value(whileWaitingFor: "an identical request", cancellation: cancellation)
        case .start(let id, let outcome):
            defer { leave(id) }
            // Started outside the lock: the task may run at once, on this thread.
            let task = startedTask(priority: priority) { [state] in
                let result: Result<HTTPResponse, any Error>
                do {
                    result = .success(try await start())
                } catch {
                    result = .failure(error)
                }
                state.withLock { $0.ended(id) }
                outcome.finish(result)
            }
            // This caller is still waiting, so the transfer cannot have been abandoned yet.
            if let joined = state.withLock({ $0.started(id, work: task, priority: priority) }) {
                escalate(task, to: joined)
            }
            return try await outcome.value(whileWaitingFor: "an identical request", cancellation: cancellation)
        }
    }

    /// Lets no later caller join a transfer in flight now: each goes on for the callers it has
    /// (until they leave), and the next identical request starts a new one.
    func detachAll() {
        state.withLock { $0.detachAll() }
    }

    /// One waiter fewer. When the last one leaves, the transfer is cancelled (a cancelled caller
    /// was its last; for one that had its answer this does nothing), and a later identical
    /// request starts a new one.
    private func leave(_ id: State.ID) {
        state.withLock { $0.leave(id) }?.cancel()
    }
}

/// What marks the answer of one shared transfer, so that its callers store it in the cache once
/// for each key they store it under (callers decoding other types use other keys), not once
/// each: a thousand callers, one disk write.
///
/// `@unchecked Sendable`: `claimed` is guarded by `lock`.
final class SharedTransferMark: @unchecked Sendable {
    /// The transfer's place among the cache's requests, taken when it started: a caller that
    /// joined later stores its answer as old as it is, not as old as the caller.
    let order: UInt64?
    private let lock = NSLock()
    private var claimed: Set<CacheKey> = []

    init(order: UInt64?) { self.order = order }

    /// Whether the caller is the first to store the answer under `key`.
    func claim(_ key: CacheKey) -> Bool {
        lock.withLock { claimed.insert(key).inserted }
    }
}
