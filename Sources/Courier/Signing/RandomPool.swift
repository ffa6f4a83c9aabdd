import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Random bytes for nonces, drawn from ``SystemCrypto/randomBytes(_:)`` a few kilobytes at a time.
///
/// A draw from libcrypto costs about a microsecond whatever its size, which was a fifth of the
/// time it takes to sign a request; from the pool a nonce costs a copy. Each byte is handed out
/// once and wiped from the pool as it goes. A forked process never hands out the bytes its
/// parent held: the child drops the pool before its first draw.
final class RandomPool: @unchecked Sendable {
    /// The pool nonces are drawn from.
    static let shared = RandomPool()

    /// How many bytes one draw from the system takes.
    static let capacity = 4_096

    /// How many times this process is a fork of the one that loaded Courier. Only the child
    /// writes it, after a fork, while it has one thread; so it takes no lock, which another
    /// thread of the parent may have held when it forked.
    private nonisolated(unsafe) static var forks = 0

    private let lock = NSLock()
    private var bytes: [UInt8] = []
    /// The first byte not yet handed out.
    private var next = 0
    /// ``forks`` when the pool was filled.
    private var filledAfterForks = 0

    /// Counts forks from the first pool made on.
    private static let countsForks: Void = {
        _ = pthread_atfork(nil, nil) { RandomPool.forks += 1 }
    }()

    /// An empty pool; it fills itself on its first draw.
    init() { _ = Self.countsForks }

    /// `count` random bytes, no more than ``capacity``, as lower-case hexadecimal.
    func hexString(ofBytes count: Int) -> String {
        precondition(count >= 0 && count <= Self.capacity, "a draw larger than the pool")
        return lock.withLock {
            if filledAfterForks != Self.forks || bytes.count - next < count {
                bytes = SystemCrypto.randomBytes(Self.capacity)
                next = 0
                filledAfterForks = Self.forks
            }
            let range = next..<next + count
            let text = bytes[range].hexString
            for index in range { bytes[index] = 0 }
            next = range.upperBound
            return text
        }
    }
}
