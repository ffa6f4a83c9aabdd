import Foundation

/// How far a transfer has come: bytes done and, when known, bytes expected.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes sent or received so far (for a resumed download, including the bytes it resumed from).
    public var completed: Int64
    /// The total, or `nil` while it is unknown (a chunked answer without a length).
    public var expected: Int64?

    /// Creates a progress value.
    /// - Parameters:
    ///   - completed: Bytes done.
    ///   - expected: Bytes expected, if known.
    public init(completed: Int64, expected: Int64?) {
        self.completed = completed
        self.expected = expected
    }

    /// `completed / expected` between 0 and 1, or `nil` when the total is unknown.
    public var fraction: Double? {
        guard let expected else { return nil }
        guard expected > 0 else { return 1 }
        return min(1, Double(completed) / Double(expected))
    }

    /// `12.5 of 64.0 MB` or `12.5 MB` when the total is unknown.
    public var description: String {
        func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
        guard let expected else { return "\(megabytes(completed)) MB" }
        return "\(megabytes(completed)) of \(megabytes(expected)) MB"
    }
}

/// Where a transport reports the progress of one request.
///
/// Transports call ``uploaded(_:of:)`` and ``downloaded(_:of:)`` as bytes move; the reporter
/// keeps each direction monotonic (a retried or restarted attempt never makes it go back) and
/// tells the stream of the ``TransferTask`` that owns it. Safe to call from any thread.
public final class ProgressReporter: Sendable {
    /// Which way the bytes that count go.
    public enum Direction: Sendable {
        /// The request body.
        case upload
        /// The answer's body.
        case download
    }

    /// The direction this reporter follows; reports about the other are ignored.
    public let direction: Direction
    let broadcaster: Broadcaster<TransferProgress>

    /// Creates a reporter.
    /// - Parameters:
    ///   - direction: The direction that counts.
    ///   - completed: The bytes done before the transfer starts (a resumed download's).
    public init(direction: Direction, completed: Int64 = 0) {
        self.direction = direction
        broadcaster = Broadcaster(TransferProgress(completed: completed, expected: nil), buffering: 1)
    }

    /// Reports bytes of the request body sent.
    /// - Parameters:
    ///   - completed: Bytes sent so far in this attempt.
    ///   - expected: The body's length, if known.
    public func uploaded(_ completed: Int64, of expected: Int64?) {
        if direction == .upload { advance(to: completed, of: expected) }
    }

    /// Reports bytes of the answer's body received.
    /// - Parameters:
    ///   - completed: Bytes received so far, including any the download resumed from.
    ///   - expected: The total, if known.
    public func downloaded(_ completed: Int64, of expected: Int64?) {
        if direction == .download { advance(to: completed, of: expected) }
    }

    /// The latest progress.
    public var current: TransferProgress { broadcaster.value }

    private func advance(to completed: Int64, of expected: Int64?) {
        broadcaster.modify { last in
            let total = expected ?? last.expected
            return TransferProgress(completed: max(last.completed, min(completed, total ?? .max)), expected: total)
        }
    }

    /// Ends the progress streams; the last value seen is the final one.
    /// - Parameter total: When the transfer succeeded, its size, reported as complete.
    func finish(total: Int64?) {
        if let total {
            broadcaster.modify { _ in TransferProgress(completed: total, expected: total) }
        }
        broadcaster.finish()
    }
}
