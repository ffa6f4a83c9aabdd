import Foundation

/// A lock for async work: one `run` at a time, in the order they asked, and waiting without
/// blocking a thread. For work that must not interleave across its own suspension points (an
/// actor's methods may).
///
/// `@unchecked Sendable`: `isLocked` and `waiters` are guarded by `lock`.
final class AsyncLock: @unchecked Sendable {
    private let lock = NSLock()
    private var isLocked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once every `run` that asked before has finished.
    func run<Value>(_ body: () async -> Value) async -> Value {
        await acquire()
        defer { release() }
        return await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isFree = lock.withLock {
                if isLocked {
                    waiters.append(continuation)
                    return false
                }
                isLocked = true
                return true
            }
            if isFree { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter, or frees it.
    private func release() {
        let next: CheckedContinuation<Void, Never>? = lock.withLock {
            guard !waiters.isEmpty else {
                isLocked = false
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}
