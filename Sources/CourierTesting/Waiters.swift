import Foundation

/// Callers waiting for a test server's records to satisfy a condition, each with a timeout.
///
/// `@unchecked Sendable`: `waiting` and `closed` are guarded by `lock`. Predicates run outside
/// the lock, so they may read the server's records.
final class Waiters<Value: Sendable>: @unchecked Sendable {
    private struct Waiter {
        let predicate: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let lock = NSLock()
    private var waiting: [UUID: Waiter] = [:]
    private var closed = false
    private let current: @Sendable () -> Value

    /// - Parameter current: Reads the records the predicates test.
    init(current: @escaping @Sendable () -> Value) { self.current = current }

    /// Waits until `predicate` holds for the records, or `timeout` passes, or ``close()``.
    /// - Returns: Whether the predicate held in time.
    func wait(timeout: Duration, _ predicate: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let registered = lock.withLock {
                guard !closed else { return false }
                waiting[id] = Waiter(predicate: predicate, continuation: continuation)
                return true
            }
            guard registered else {
                continuation.resume(returning: predicate(current()))
                return
            }
            resolve()
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.resolve(timedOut: id)
            }
        }
    }

    /// Resumes the waiters whose predicate now holds with `true`, and the one whose time ran
    /// out with `false`. Call after every change of the records.
    func resolve(timedOut: UUID? = nil) {
        let snapshot = current()
        let candidates = lock.withLock { waiting }
        var decided: [(UUID, Bool)] = []
        for (id, waiter) in candidates {
            let satisfied = waiter.predicate(snapshot)
            if satisfied || id == timedOut { decided.append((id, satisfied)) }
        }
        let ready = lock.withLock {
            decided.compactMap { id, satisfied in waiting.removeValue(forKey: id).map { ($0.continuation, satisfied) } }
        }
        for (continuation, result) in ready { continuation.resume(returning: result) }
    }

    /// Ends every wait with the predicate's current answer; later waits answer at once.
    func close() {
        let pending = lock.withLock {
            closed = true
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        let snapshot = current()
        for waiter in pending { waiter.continuation.resume(returning: waiter.predicate(snapshot)) }
    }
}
