/// The bookkeeping of transfers shared by identical requests, as a value: events in, actions out,
/// no task, lock or clock. ``SharedTransfers`` holds one under its lock and does what it says;
/// tests drive it directly, through every order of events.
///
/// A transfer is known by its ``ID`` for as long as a caller waits for it. Later identical
/// requests can join it while it is the one in flight for its key: until it ends, or until
/// ``detachAll()``. `Work` is what runs the transfer (a task), and `Transfer` what its callers
/// wait on (its outcome); tests use plain values for both.
struct SharedTransferState<Work, Transfer> {
    /// One transfer, for as long as a caller waits for it.
    struct ID: Hashable {
        fileprivate let number: UInt64
    }

    /// What a caller does on arrival.
    enum Arrival {
        /// Start the transfer, then tell ``started(_:work:priority:)``.
        case start(ID, Transfer)
        /// Wait for the transfer in flight; raise its work's priority to the caller's when it
        /// has work already (else ``started(_:work:priority:)`` says whether to, later).
        case join(ID, Transfer, running: Work?)
    }

    fileprivate struct Entry {
        let key: [String]
        let transfer: Transfer
        var waiters = 1
        var work: Work?
        /// The highest priority of a caller that joined before ``work`` was known.
        var joinedPriority: TaskPriority?
    }

    /// Every transfer a caller waits for.
    private var entries: [ID: Entry] = [:]
    /// The transfer later identical requests join, by key.
    private var joinable: [[String]: ID] = [:]
    private var nextNumber: UInt64 = 0

    /// How many callers wait for a transfer that later identical requests can still join.
    var waiterCount: Int { joinable.values.reduce(0) { $0 + (entries[$1]?.waiters ?? 0) } }

    /// How many transfers callers wait for, joinable or not.
    var transferCount: Int { entries.count }

    /// Whether the joinable transfer for `key` has its work.
    func hasWork(_ key: [String]) -> Bool { joinable[key].flatMap { entries[$0]?.work } != nil }

    /// A caller of `priority` arrives for `key`: it joins the transfer in flight, or starts one
    /// (made by `make`).
    mutating func arrive(_ key: [String], priority: TaskPriority, make: () -> Transfer) -> Arrival {
        if let id = joinable[key], var entry = entries[id] {
            entry.waiters += 1
            if entry.work == nil, entry.joinedPriority.map({ $0 < priority }) ?? true {
                entry.joinedPriority = priority
            }
            entries[id] = entry
            return .join(id, entry.transfer, running: entry.work)
        }
        nextNumber &+= 1
        let id = ID(number: nextNumber)
        let transfer = make()
        entries[id] = Entry(key: key, transfer: transfer)
        joinable[key] = id
        return .start(id, transfer)
    }

    /// The transfer's work began, on behalf of its starter at `priority`.
    /// - Returns: The priority to raise the work to: that of a caller who joined meanwhile, when
    ///   higher.
    mutating func started(_ id: ID, work: Work, priority: TaskPriority) -> TaskPriority? {
        guard var entry = entries[id] else { return nil }
        entry.work = work
        entries[id] = entry
        return entry.joinedPriority.flatMap { $0 > priority ? $0 : nil }
    }

    /// The transfer has its outcome: later identical requests start a new one.
    mutating func ended(_ id: ID) {
        guard let entry = entries[id], joinable[entry.key] == id else { return }
        joinable[entry.key] = nil
    }

    /// A caller stopped waiting (answered or cancelled).
    /// - Returns: The work to cancel: the transfer's, when this was its last caller.
    mutating func leave(_ id: ID) -> Work? {
        guard var entry = entries[id] else { return nil }
        entry.waiters -= 1
        guard entry.waiters == 0 else {
            entries[id] = entry
            return nil
        }
        entries[id] = nil
        if joinable[entry.key] == id { joinable[entry.key] = nil }
        return entry.work
    }

    /// No later caller joins a transfer in flight now: each goes on for the callers it has.
    mutating func detachAll() {
        joinable.removeAll()
    }
}

extension SharedTransferState: Sendable where Work: Sendable, Transfer: Sendable {}
extension SharedTransferState.Arrival: Sendable where Work: Sendable, Transfer: Sendable {}
extension SharedTransferState.Entry: Sendable where Work: Sendable, Transfer: Sendable {}
