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
/// twice: a forked process never hands out the bytes its parent held, as the child empties its
/// copy of the pool as it starts, in a `pthread_atfork` handler. (`fork()` runs those handlers;
/// a process made by a raw `clone` system call, which runs none, is not one Courier supports.)
final class RandomPool: @unchecked Sendable {
    /// The pool nonces are drawn from. A fork waits for a draw in progress to finish, so the
    /// child's copy is whole, and the child starts with the pool empty and its lock new.
    static let shared: RandomPool = {
        // The first draw (which loads libcrypto and sets up its generator) happens here, not
        // under the pool's lock once it is shared: set-up that registers fork handlers of its
        // own while a fork waits for that lock would wait for the fork.
        let pool = RandomPool()
        pool.refill()
        _ = pthread_atfork(
            { RandomPool.shared.lock() }, { RandomPool.shared.unlock() }, { RandomPool.shared.forked() })
        return pool
    }()

    /// How many bytes one draw from the system takes.
    static let capacity = 4_096

    /// A plain mutex, made anew in a forked child.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var bytes: [UInt8] = []
    /// The first byte not yet handed out.
    private var next = 0

    /// An empty pool; it fills itself on its first draw.
    init() {
        mutex = .allocate(capacity: 1)
        precondition(pthread_mutex_init(mutex, nil) == 0, "a mutex could not be made")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// `count` random bytes, no more than ``capacity``, as lower-case hexadecimal.
    func hexString(ofBytes count: Int) -> String {
        precondition(count >= 0 && count <= Self.capacity, "a draw larger than the pool")
        lock()
        defer { unlock() }
        if bytes.count - next < count { refill() }
        defer { next += count }
        return bytes[next..<next + count].hexString
    }

    /// Fills the pool anew.
    private func refill() {
        bytes = SystemCrypto.randomBytes(Self.capacity)
        precondition(bytes.count == Self.capacity, "the system gave fewer random bytes than asked")
        next = 0
    }

    private func lock() { pthread_mutex_lock(mutex) }
    private func unlock() { pthread_mutex_unlock(mutex) }

    /// In a child process, as it starts: the bytes left are its parent's, so none of them is
    /// handed out. The lock, taken before the fork, is made anew rather than unlocked: the
    /// thread that took it is the child's, but not every platform lets a child unlock a mutex
    /// its parent locked.
    func forked() {
        next = bytes.count
        precondition(pthread_mutex_init(mutex, nil) == 0, "a mutex could not be made")
    }
}
