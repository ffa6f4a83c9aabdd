import Foundation

/// This process's open descriptors, from `/proc/self/fd` (Linux).
enum Descriptors {
    /// How many are open, or -1 where `/proc` does not tell (a check on the count then fails).
    static var open: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The count once it is back to `baseline`, or after 15 s: a released client's threads, and
    /// the peer's, close theirs a moment later. With a baseline of 0, the count once it stopped
    /// falling for 200 ms.
    static func settling(at baseline: Int) async -> Int {
        let deadline = ContinuousClock.now + .seconds(15)
        var count = open
        while count > baseline, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(baseline == 0 ? 200 : 50))
            let now = open
            if baseline == 0, now >= count { return now }
            count = now
        }
        return count
    }
}
