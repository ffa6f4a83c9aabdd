import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Random bytes for nonces, drawn from ``SystemCrypto/randomBytes(_:)`` 4 KB at a time.
///
/// Each call to libcrypto's generator has a fixed cost of about a microsecond, a fifth of the
/// time it took to sign a request; from the pool a nonce costs a copy. No byte is handed out
/// twice: a forked process never hands out the bytes its parent held, as the pool notes which
/// process filled it and refills when that is not the one drawing.
final class RandomPool: @unchecked Sendable {
    /// The pool nonces are drawn from. A fork waits for a draw from it in progress to finish,
    /// so the child does not start with its lock held by a thread it does not have.
    static let shared: RandomPool = {
        let pool = RandomPool()
        _ = pthread_atfork(
            { RandomPool.shared.lock.lock() }, { RandomPool.shared.lock.unlock() },
            { RandomPool.shared.lock.unlock() })
        return pool
    }()

    /// How many bytes one draw from the system takes.
    static let capacity = 4_096

    private let lock = NSLock()
    private var bytes: [UInt8] = []
    /// The first byte not yet handed out.
    private var next = 0
    /// The process that filled the pool.
    private var owner: pid_t = 0

    /// An empty pool; it fills itself on its first draw.
    init() {}

    /// `count` random bytes, no more than ``capacity``, as lower-case hexadecimal.
    func hexString(ofBytes count: Int) -> String {
        precondition(count >= 0 && count <= Self.capacity, "a draw larger than the pool")
        let process = getpid()
        return lock.withLock {
            if process != owner || bytes.count - next < count {
                bytes = SystemCrypto.randomBytes(Self.capacity)
                precondition(bytes.count == Self.capacity, "the system gave fewer random bytes than asked")
                next = 0
                owner = process
            }
            defer { next += count }
            return bytes[next..<next + count].hexString
        }
    }
}
