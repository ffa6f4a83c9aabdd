import Foundation

/// The requests a client has in flight: what ``NetworkClient/cancelAll()`` cancels and what the
/// activity count shows. Lock-based, so starting and ending a request costs no hop onto the
/// client's actor.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class InFlightRegistry: @unchecked Sendable {
    /// One request's cancellation, registered before its task exists, so a ``cancelAll()`` that
    /// comes in between is not lost.
    ///
    /// `@unchecked Sendable`: all state is guarded by `lock`.
    final class Entry: @unchecked Sendable {
        private let lock = NSLock()
        private var cancelAction: (@Sendable () -> Void)?
        private var isCancelled = false

        /// Sets what cancels the request; runs it at once if the request was cancelled already.
        func attach(_ action: @escaping @Sendable () -> Void) {
            let cancelNow = lock.withLock {
                cancelAction = action
                return isCancelled
            }
            if cancelNow { action() }
        }

        func cancel() {
            let action = lock.withLock {
                isCancelled = true
                return cancelAction
            }
            action?()
        }
    }

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0
    /// The number of requests in flight, for activity observers.
    let activity = Broadcaster(0, buffering: 64)

    /// Registers a request.
    func add() -> (id: UInt64, entry: Entry) {
        let entry = Entry()
        let id = lock.withLock {
            nextID += 1
            entries[nextID] = entry
            activity.update(entries.count)
            return nextID
        }
        return (id, entry)
    }

    /// Removes a finished request.
    func remove(_ id: UInt64) {
        lock.withLock {
            entries[id] = nil
            activity.update(entries.count)
        }
    }

    /// Cancels every request in flight.
    func cancelAll() {
        for entry in lock.withLock({ Array(entries.values) }) { entry.cancel() }
    }

    var count: Int { lock.withLock { entries.count } }
}
