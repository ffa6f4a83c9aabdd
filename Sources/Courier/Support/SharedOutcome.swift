import Foundation

/// The outcome of one piece of work that many callers wait for (a token refresh, a re-login),
/// where each caller can stop waiting on its own: a cancelled caller gets
/// ``NetworkError/Code/cancelled`` at once, and the work goes on for the others.
///
/// `@unchecked Sendable`: `outcome` and `waiters` are guarded by `lock`.
final class SharedOutcome<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Value, any Error>?
    private var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    private var nextWaiter: UInt64 = 0

    /// Sets the outcome and answers every waiter; later calls do nothing.
    func finish(_ result: Result<Value, any Error>) {
        let waiting: [CheckedContinuation<Value, any Error>] = lock.withLock {
            guard outcome == nil else { return [] }
            outcome = result
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in waiting { waiter.resume(with: result) }
    }

    /// Waits for the outcome, or for the calling task to be cancelled.
    /// - Parameters:
    ///   - activity: What is waited for, for the cancellation's message.
    ///   - cancellation: Given, once the caller waits, what stops its wait; for callers that
    ///     can be cancelled from elsewhere than their task (``NetworkClient/cancelAll()``).
    /// - Throws: The work's error, or ``NetworkError/Code/cancelled``.
    func value(
        whileWaitingFor activity: String,
        cancellation: ((_ stop: @escaping @Sendable () -> Void) -> Void)? = nil
    ) async throws -> Value {
        let (id, ready): (UInt64, Result<Value, any Error>?) = lock.withLock {
            nextWaiter &+= 1
            return (nextWaiter, outcome)
        }
        // Work that finished before the caller waits (it never had to wait itself) answers at once.
        if let ready { return try ready.get() }
        let cancelled = NetworkError(.cancelled, "The request was cancelled while waiting for \(activity).")
        let stop: @Sendable () -> Void = { [self] in
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: cancelled)
        }
        return try await withTaskCancellationHandler {
            // The outcome was stored under the lock; taking it orders that for the thread
            // sanitizer (see CONTRIBUTING, "Sanitizers").
            defer { lock.withLock {} }
            return try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Value, any Error>? = lock.withLock {
                    if let outcome { return outcome }
                    // A cancellation before this point found no waiter to answer.
                    if Task.isCancelled { return .failure(cancelled) }
                    waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) } else { cancellation?(stop) }
            }
        } onCancel: {
            stop()
        }
    }
}
