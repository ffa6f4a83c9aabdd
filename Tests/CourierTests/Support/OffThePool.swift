import Foundation

/// Runs CPU-heavy synchronous work on a thread of its own, not on one of the few threads that
/// run every test's tasks: there it would hold back other suites' timers and sleeps (a test
/// of a 50 ms deadline waited seconds behind a megabyte being redacted).
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}
