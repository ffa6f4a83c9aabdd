import Foundation

/// What the client's layers tell a recorder about a request, beyond what goes on the wire
/// (``HTTPRequest/notes``): which attempts belong to one call, which values they added are
/// secret, and which parameters change on every attempt.
package struct ExchangeNotes: Sendable, Hashable {
    /// The call the request belongs to: every attempt of one call (a retry, a replay after a
    /// re-login) has the same number; 0 for a request no client made.
    package var call: UInt64 = 0
    /// Values the layers marked as secret (``HTTPRequest/markAsSecret(_:)``: a token, a
    /// signature), hidden wherever they appear in a written exchange, whatever name they are
    /// under.
    package var secretValues: [String] = []
    /// Names of parameters and JSON fields whose values change on every attempt (a timestamp,
    /// a nonce), which matching a recorded exchange ignores.
    package var volatileNames: [String] = []

    package init() {}

    private static let counter = Counter()

    /// A number for a new call, never 0.
    static func nextCall() -> UInt64 { counter.next() }

    /// Counts calls; `@unchecked Sendable`: `value` is guarded by `lock`.
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value: UInt64 = 0

        func next() -> UInt64 {
            lock.withLock {
                value &+= 1
                if value == 0 { value = 1 }
                return value
            }
        }
    }
}
