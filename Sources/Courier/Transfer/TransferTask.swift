import Foundation

/// A running upload or download: await its ``value`` and follow its ``progressUpdates()`` at once.
///
/// ```swift
/// let task = client.download(.report(id), to: destination)
/// Task { for await step in task.progressUpdates() { bar.update(step.fraction ?? 0) } }
/// let file = try await task.value
/// ```
///
/// The transfer starts when the task is made and runs whether or not anyone awaits it.
/// ``cancel()``, cancelling a task that awaits ``value``, or ``NetworkClient/cancelAll()`` stops
/// it; ``value`` then throws ``NetworkError/Code/cancelled``.
public struct TransferTask<Value: Sendable>: Sendable {
    private let task: Task<Value, any Error>
    private let reporter: ProgressReporter

    init(reporter: ProgressReporter, operation: @escaping @Sendable () async throws -> Value) {
        self.reporter = reporter
        self.task = Task(operation: operation)
    }

    /// A new stream of progress: the latest value first, then each advance, monotonic, ending
    /// when the transfer ends, at the total when it succeeded. A slow reader skips to the
    /// newest value rather than queueing them. Each call returns a stream of its own.
    /// - Returns: The stream.
    public func progressUpdates() -> AsyncStream<TransferProgress> { reporter.broadcaster.stream() }

    /// The latest progress.
    public var currentProgress: TransferProgress { reporter.current }

    /// The result, once the transfer has ended.
    ///
    /// Cancelling the task that awaits it cancels the transfer.
    /// - Throws: ``NetworkError``.
    public var value: Value {
        get async throws(NetworkError) {
            do {
                return try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: { [task] in
                    task.cancel()
                }
            } catch {
                throw NetworkError.wrapping(error)
            }
        }
    }

    /// Stops the transfer; ``value`` throws ``NetworkError/Code/cancelled``.
    public func cancel() { task.cancel() }
}
