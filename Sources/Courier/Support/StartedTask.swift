/// A detached task for `operation`, started on this thread where the system can (Swift 6.2's
/// `Task.immediateDetached`, on the 2025 systems and later): it runs up to its first wait at
/// once (for a request, the layers up to the transport) instead of waking another thread to
/// pick the task up.
/// - Parameters:
///   - priority: The task's priority.
///   - operation: The work.
/// - Returns: The task.
func startedTask<Value: Sendable>(
    priority: TaskPriority?, _ operation: @escaping @Sendable () async throws -> Value
) -> Task<Value, any Error> {
    #if compiler(>=6.2)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return Task.immediateDetached(priority: priority, operation: operation)
        }
    #endif
    return Task.detached(priority: priority, operation: operation)
}

/// Raises `task`'s priority to `priority` where the system can (Swift 6.2's
/// `escalatePriority(to:)`, on the 2025 systems and later), so work a higher-priority caller
/// waits for does not run at a lower one's priority. Elsewhere it does nothing.
/// - Parameters:
///   - task: The task.
///   - priority: The priority it should run at, at least.
func escalate<Value: Sendable>(_ task: Task<Value, any Error>, to priority: TaskPriority) {
    #if compiler(>=6.2)
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            task.escalatePriority(to: priority)
        }
    #endif
}
