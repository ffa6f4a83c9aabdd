import Foundation

/// Identical requests in flight that share one transfer: the first starts it, the others wait
/// for its answer. A waiter that is cancelled stops waiting at once; the transfer goes on for
/// the others, and is cancelled only when the last waiter is.
///
/// `@unchecked Sendable`: `transfers` and each transfer's `waiters` are guarded by `lock`.
final class SharedTransfers: @unchecked Sendable {
    private final class Transfer: @unchecked Sendable {
        let outcome = SharedOutcome<HTTPResponse>()
        var waiters = 1
        var task: Task<Void, Never>?
    }

    private let lock = NSLock()
    private var transfers: [CacheKey: Transfer] = [:]

    /// The number of callers waiting for a shared transfer, all transfers together.
    var waiterCount: Int { lock.withLock { transfers.values.reduce(0) { $0 + $1.waiters } } }

    /// The answer of the transfer for `key`: one in flight, or a new one made by `start`.
    /// - Throws: The transfer's error, or ``NetworkError/Code/cancelled`` when the calling task is
    ///   cancelled.
    func response(for key: CacheKey, start: @escaping @Sendable () async throws -> HTTPResponse) async throws
        -> HTTPResponse
    {
        // A caller cancelled already (by cancelAll(), say) starts nothing.
        guard !Task.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled before it was sent.")
        }
        let priority = Task.currentPriority
        let transfer: Transfer = lock.withLock {
            if let running = transfers[key] {
                running.waiters += 1
                return running
            }
            let transfer = Transfer()
            transfers[key] = transfer
            transfer.task = Task.detached(priority: priority) { [self] in
                let result: Result<HTTPResponse, any Error>
                do { result = .success(try await start()) } catch { result = .failure(error) }
                lock.withLock { if transfers[key] === transfer { transfers[key] = nil } }
                transfer.outcome.finish(result)
            }
            return transfer
        }
        do {
            let response = try await transfer.outcome.value(whileWaitingFor: "an identical request")
            leave(transfer, key: key, cancelled: false)
            return response
        } catch {
            leave(transfer, key: key, cancelled: Task.isCancelled)
            throw error
        }
    }

    /// Lets no later caller join a transfer in flight now: each goes on for the callers it has
    /// (until they leave), and the next identical request starts a new one.
    func detachAll() {
        lock.withLock { transfers.removeAll() }
    }

    /// One waiter fewer; the last one to leave because it was cancelled cancels the transfer, and
    /// a later identical request starts a new one.
    private func leave(_ transfer: Transfer, key: CacheKey, cancelled: Bool) {
        let abandoned: Task<Void, Never>? = lock.withLock {
            transfer.waiters -= 1
            guard cancelled, transfer.waiters == 0 else { return nil }
            if transfers[key] === transfer { transfers[key] = nil }
            return transfer.task
        }
        abandoned?.cancel()
    }
}
