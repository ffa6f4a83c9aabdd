import Foundation

/// A value that changes over time, told to any number of `AsyncStream` listeners: each gets the
/// current value first, then every change, until ``finish()``.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class Broadcaster<Value: Sendable & Equatable>: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Value
    private var finished = false
    private var listeners: [UInt64: AsyncStream<Value>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private let buffering: Int

    /// - Parameters:
    ///   - initial: The first value.
    ///   - buffering: How many undelivered values a slow listener keeps (the newest ones).
    init(_ initial: Value, buffering: Int = 16) {
        current = initial
        self.buffering = buffering
    }

    var value: Value { lock.withLock { current } }

    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Value.self, bufferingPolicy: .bufferingNewest(buffering))
        lock.withLock {
            continuation.yield(current)
            if finished {
                continuation.finish()
                return
            }
            nextID += 1
            let id = nextID
            listeners[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.lock.withLock { _ = self?.listeners.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Sets the value and tells every listener, if it changed.
    func update(_ value: Value) {
        lock.withLock {
            guard value != current, !finished else { return }
            current = value
            for listener in listeners.values { listener.yield(value) }
        }
    }

    /// Changes the value with `transform` (under the lock) and tells every listener if it changed.
    func modify(_ transform: (Value) -> Value) {
        lock.withLock {
            guard !finished else { return }
            let value = transform(current)
            guard value != current else { return }
            current = value
            for listener in listeners.values { listener.yield(value) }
        }
    }

    /// Ends every stream, now and for later listeners (who get the last value only).
    func finish() {
        let ending = lock.withLock {
            finished = true
            defer { listeners = [:] }
            return Array(listeners.values)
        }
        for listener in ending { listener.finish() }
    }
}
