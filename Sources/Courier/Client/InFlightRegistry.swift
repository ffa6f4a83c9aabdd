import Foundation

/// The requests a client has in flight, each from the moment it begins: what
/// ``NetworkClient/cancelAll()`` and a logout cancel, and what the activity count shows.
/// Lock-based, so starting and ending a request costs no hop onto the client's actor.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class InFlightRegistry: @unchecked Sendable {
    /// One request: the session epoch it began in, and what cancels it. Registered before
    /// anything of the request waits, so a cancellation that comes in between is not lost.
    ///
    /// `@unchecked Sendable`: all state is guarded by `lock`.
    final class Entry: @unchecked Sendable {
        fileprivate let id: UInt64
        /// The number of the session epoch the request began in.
        let epoch: UInt64
        /// Whether it is the session's own (a refresh, a silent login), which
        /// ``NetworkClient/cancelAll()`` leaves alone.
        let isSessionWork: Bool
        private let lock = NSLock()
        private var cancelAction: (@Sendable () -> Void)?
        private var cancelled = false

        fileprivate init(id: UInt64, epoch: UInt64, isSessionWork: Bool) {
            self.id = id
            self.epoch = epoch
            self.isSessionWork = isSessionWork
        }

        /// Whether the request was cancelled: no step of it may send or store anything more.
        var isCancelled: Bool { lock.withLock { cancelled } }

        /// Sets what cancels the request now (its task, or its wait for a shared transfer); runs
        /// it at once if the request was cancelled already.
        func attach(_ action: @escaping @Sendable () -> Void) {
            let cancelNow = lock.withLock {
                cancelAction = action
                return cancelled
            }
            if cancelNow { action() }
        }

        func cancel() {
            let action = lock.withLock {
                cancelled = true
                return cancelAction
            }
            action?()
        }

        /// Forgets what cancels the request (it has ended): whatever that holds is released.
        fileprivate func detach() {
            lock.withLock { cancelAction = nil }
        }
    }

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0
    /// The number of requests in flight, for activity observers.
    let activity = Broadcaster(0, buffering: 64)

    /// Registers a request that begins in session epoch `epoch`.
    func add(epoch: UInt64, isSessionWork: Bool = false) -> Entry {
        lock.withLock {
            nextID += 1
            let entry = Entry(id: nextID, epoch: epoch, isSessionWork: isSessionWork)
            entries[nextID] = entry
            activity.update(entries.count)
            return entry
        }
    }

    /// Removes a finished request.
    func remove(_ entry: Entry) {
        lock.withLock {
            entries[entry.id] = nil
            activity.update(entries.count)
        }
        entry.detach()
    }

    /// Cancels every request in flight but the session's own.
    func cancelAll() {
        for entry in lock.withLock({ entries.values.filter { !$0.isSessionWork } }) { entry.cancel() }
    }

    /// Cancels the requests that began in a session epoch before `epoch`.
    func cancel(before epoch: UInt64) {
        for entry in lock.withLock({ entries.values.filter { $0.epoch < epoch } }) { entry.cancel() }
    }

    var count: Int { lock.withLock { entries.count } }
}
