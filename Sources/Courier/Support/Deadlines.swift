import Dispatch
import Foundation

/// Runs actions at their deadlines, for every request of the process, on one Dispatch timer.
///
/// A timer per request wakes Dispatch's timer thread twice on the path of every request (armed,
/// then cancelled). Here arming and disarming a deadline take a lock and a dictionary entry:
/// the one timer is re-armed only when a new deadline comes before the one it is set for, and a
/// disarmed deadline is simply forgotten (when the timer fires for it, it finds nothing due and
/// is set for the next). Deadlines in the past fire at once.
///
/// `@unchecked Sendable`: `entries`, `nextID` and `armedFor` are guarded by `lock`.
final class Deadlines: @unchecked Sendable {
    /// The deadlines of every `URLSessionTransport` call, streamed answer, and exchange through a
    /// transport that keeps no deadline of its own.
    static let shared = Deadlines()

    /// An armed deadline, to disarm it.
    struct Token: Sendable {
        fileprivate let id: UInt64
    }

    private let lock = NSLock()
    private var entries: [UInt64: (deadline: ContinuousClock.Instant, action: @Sendable () -> Void)] = [:]
    private var nextID: UInt64 = 0
    /// The deadline the timer is set for; `nil` while it is not set.
    private var armedFor: ContinuousClock.Instant?
    private let timer: any DispatchSourceTimer

    init() {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Courier.Deadlines"))
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Runs `action` once `deadline` has passed, unless the returned token is disarmed first.
    /// - Parameters:
    ///   - deadline: When to run it.
    ///   - action: What to run, on one of Dispatch's shared threads.
    /// - Returns: The token for ``disarm(_:)``.
    func arm(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        lock.withLock {
            let id = nextID
            nextID &+= 1
            entries[id] = (deadline, action)
            if armedFor.map({ deadline < $0 }) ?? true { set(for: deadline) }
            return Token(id: id)
        }
    }

    /// Forgets a deadline; its action will not run (unless it is running already).
    func disarm(_ token: Token) {
        _ = lock.withLock { entries.removeValue(forKey: token.id) }
    }

    /// The number of armed deadlines, for tests.
    var count: Int { lock.withLock { entries.count } }

    /// Sets the timer; called with `lock` held.
    private func set(for deadline: ContinuousClock.Instant) {
        armedFor = deadline
        // A year at most: `DispatchTime` counts nanoseconds in 64 bits.
        let seconds = min(max(ContinuousClock.now.duration(to: deadline).seconds, 0), 3.2e7)
        timer.schedule(deadline: .now() + seconds, leeway: .milliseconds(1))
    }

    /// Runs what is due, then sets the timer for the earliest deadline left.
    private func fire() {
        let due: [@Sendable () -> Void] = lock.withLock {
            let now = ContinuousClock.now
            let dueIDs = entries.compactMap { $0.value.deadline <= now ? $0.key : nil }
            let due = dueIDs.compactMap { entries.removeValue(forKey: $0)?.action }
            armedFor = nil
            if let next = entries.values.map(\.deadline).min() { set(for: next) }
            return due
        }
        // On Dispatch's shared threads: an action that waits (for a lock held by a slow disk
        // write, say) holds up no other deadline.
        for action in due { DispatchQueue.global().async(execute: action) }
    }
}
