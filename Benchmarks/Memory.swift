import Foundation

/// Resident memory of this process, from `/proc/self/status` (Linux).
enum Memory {
    /// Resets the peak (`VmHWM`) to the current resident size, so the next peak read covers only
    /// what follows. Needs Linux ≥ 4.0; returns whether it worked.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The resident size now, in bytes.
    static var resident: Int64 { field("VmRSS") }

    /// The peak resident size since the last ``resetPeak()``, in bytes.
    static var peak: Int64 { field("VmHWM") }

    private static func field(_ name: String) -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap {
                Int64($0)
            }
            return (number ?? 0) * 1024
        }
        return 0
    }

    /// Runs `body` and returns how far the peak resident size rose above the size before it;
    /// where the peak cannot be reset, how far the resident size rose (the peak would be the
    /// process's whole life's).
    static func peakGrowth(_ body: () async throws -> Void) async rethrows -> Int64 {
        let reset = resetPeak()
        let before = resident
        try await body()
        return max(0, (reset ? peak : resident) - before)
    }
}
