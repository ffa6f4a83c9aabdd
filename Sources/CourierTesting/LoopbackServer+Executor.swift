import Foundation

extension LoopbackServer {
    /// Runs a route's async work on the connection's own thread.
    ///
    /// Routes therefore never need a thread of Swift's cooperative pool, so a test that blocks
    /// the pool (a synchronous `@Test` waiting on a socket, on a two-core machine) cannot starve
    /// the server that it is waiting for.
    ///
    /// `@unchecked Sendable`: `jobs` and `finished` are guarded by `condition`.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    final class ConnectionExecutor: TaskExecutor, @unchecked Sendable {
        private let condition = NSCondition()
        private var jobs: [UnownedJob] = []
        private var finished = false

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            condition.withLock {
                jobs.append(job)
                condition.signal()
            }
        }

        /// Marks the route as done; ``runUntilFinished()`` returns once its jobs have run.
        func finish() {
            condition.withLock {
                finished = true
                condition.signal()
            }
        }

        /// Runs enqueued jobs on the calling thread until ``finish()`` is called.
        func runUntilFinished() {
            while true {
                condition.lock()
                while jobs.isEmpty && !finished { condition.wait() }
                let batch = jobs
                jobs.removeAll()
                let done = finished && batch.isEmpty
                condition.unlock()
                if done { return }
                for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
        }
    }
}
