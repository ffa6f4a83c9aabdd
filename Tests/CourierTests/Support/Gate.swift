import Foundation

/// A gate async work waits at until the test opens it; the test can wait for arrivals first.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var arrived = 0
    private var passing: [CheckedContinuation<Void, Never>] = []
    private var watching: [(Int, CheckedContinuation<Void, Never>)] = []

    /// Arrives and waits until the gate is open.
    func pass() async {
        await withCheckedContinuation { continuation in
            let (open, ready) = lock.withLock {
                arrived += 1
                let ready = watching.filter { $0.0 <= arrived }.map(\.1)
                watching.removeAll { $0.0 <= arrived }
                if !isOpen { passing.append(continuation) }
                return (isOpen, ready)
            }
            for watcher in ready { watcher.resume() }
            if open { continuation.resume() }
        }
    }

    /// Waits until `count` callers have arrived.
    func arrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock {
                if arrived >= count { return true }
                watching.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Waits until `count` callers have arrived, checking every 5 ms for at most `limit`.
    /// - Returns: Whether they did; a test that expects fewer can fail instead of hanging.
    func arrivals(_ count: Int, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while lock.withLock({ arrived }) < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Lets every waiting and later caller through.
    func open() {
        let waiting = lock.withLock {
            isOpen = true
            defer { passing.removeAll() }
            return passing
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// The result of `operation`, or `nil` when it takes longer than `limit` (it keeps running,
/// unawaited, so a hang shows as `nil` instead of hanging the test).
func result<T: Sendable>(within limit: Duration, of operation: @escaping @Sendable () async -> T) async -> T? {
    await withCheckedContinuation { continuation in
        let once = Once(continuation)
        Task { once.resume(await operation()) }
        Task {
            try? await Task.sleep(for: limit)
            once.resume(nil)
        }
    }
}

/// Resumes a continuation once; later values are dropped. `@unchecked Sendable`: guarded by `lock`.
private final class Once<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?

    init(_ continuation: CheckedContinuation<T, Never>) { self.continuation = continuation }

    func resume(_ value: T) {
        let waiting = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
