import Foundation
import Testing

@testable import Courier

/// The one timer behind every URLSessionTransport deadline.
@Suite("Deadlines")
struct DeadlinesTests {
    /// Counts the actions that ran, by name.
    ///
    /// `@unchecked Sendable`: `names` is guarded by `lock` (`Mutex` needs iOS 18).
    final class Fired: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func record(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }

        /// Waits up to `timeout` for `count` actions (by default long: a limit that only ends a
        /// wait for actions that never run).
        func wait(for count: Int, timeout: Duration = .seconds(30) * TestTiming.scale) async -> [String] {
            let end = ContinuousClock.now + timeout
            while all.count < count, ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(5)) }
            return all
        }
    }

    @Test("a deadline runs once, not before its time; one in the past runs at once")
    func runsAtItsTime() async {
        let deadlines = Deadlines()
        let fired = Fired()
        _ = deadlines.arm(at: .now - .seconds(1)) { fired.record("past") }
        #expect(await fired.wait(for: 1, timeout: .seconds(10) * TestTiming.scale) == ["past"])
        let start = ContinuousClock.now
        _ = deadlines.arm(at: start + .milliseconds(100)) { fired.record("later") }
        #expect(await fired.wait(for: 2) == ["past", "later"])
        #expect(ContinuousClock.now - start >= .milliseconds(100))
        try? await Task.sleep(for: .milliseconds(100))
        #expect(fired.all.count == 2, "each runs once")
        #expect(deadlines.count == 0)
        withExtendedLifetime(deadlines) {}
    }

    @Test("a disarmed deadline never runs")
    func disarmed() async {
        let deadlines = Deadlines()
        let fired = Fired()
        let token = deadlines.arm(at: .now + .milliseconds(300)) { fired.record("disarmed") }
        _ = deadlines.arm(at: .now + .milliseconds(400)) { fired.record("kept") }
        deadlines.disarm(token)
        // The timer still fires for the disarmed one, finds nothing due, and is set for the next.
        #expect(await fired.wait(for: 1) == ["kept"])
        try? await Task.sleep(for: .milliseconds(100))
        #expect(fired.all == ["kept"])
        withExtendedLifetime(deadlines) {}
    }

    @Test("a deadline armed after a later one still runs on time")
    func earlierAfterLater() async {
        let deadlines = Deadlines()
        let fired = Fired()
        let far = deadlines.arm(at: .now + .seconds(60)) { fired.record("far") }
        let start = ContinuousClock.now
        _ = deadlines.arm(at: start + .milliseconds(50)) { fired.record("near") }
        #expect(await fired.wait(for: 1) == ["near"])
        // Half the far one's minute: the suite's first seconds can hold any wake-up for several.
        #expect(ContinuousClock.now - start < .seconds(30) * TestTiming.scale, "not held back by the one a minute away")
        deadlines.disarm(far)
        #expect(deadlines.count == 0)
        withExtendedLifetime(deadlines) {}
    }

    @Test("of 1,000 deadlines with every other one disarmed, exactly the others run")
    func many() async {
        let deadlines = Deadlines()
        let fired = Fired()
        // Due well after arming all 1,000 can take, however loaded or instrumented the machine:
        // one armed in the past would run at once, maybe before it is disarmed.
        let first = ContinuousClock.now + .seconds(2) * TestTiming.scale
        for index in 0..<1000 {
            // Disarmed at once, long before it is due.
            let due = first + .milliseconds(Int64(index % 50) * 2)
            let token = deadlines.arm(at: due) { fired.record("\(index)") }
            if index.isMultiple(of: 2) { deadlines.disarm(token) }
        }
        let names = await fired.wait(for: 500)
        try? await Task.sleep(for: .milliseconds(100))
        #expect(fired.all.count == 500)
        #expect(Set(names.compactMap(Int.init)) == Set(stride(from: 1, to: 1000, by: 2)))
        #expect(deadlines.count == 0)
        withExtendedLifetime(deadlines) {}
    }
}
