import Foundation

/// A value guarded by a mutex, both in one allocation: made for every observed request, where
/// `NSLock` (several allocations on Linux) would cost more than the work it guards.
struct Locked<Value> {
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    /// A new one holding `value`.
    init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { _ = pthread_mutex_init($0, nil) }
        storage = unsafeDowncast(buffer, to: Storage.self)
    }

    /// Runs `body` on the value with the mutex held.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}

/// `@unchecked Sendable`: the value is only reached through ``Locked/withLock(_:)``.
extension Locked: @unchecked Sendable where Value: Sendable {}
