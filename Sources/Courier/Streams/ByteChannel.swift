import Foundation

/// The bounded buffer between a transport that streams an answer's body and the one task that
/// reads it.
///
/// The transport offers each piece as it arrives (``offer(_:)`` when it can pause, ``push(_:)``
/// when it cannot); past ``highWater`` bytes buffered it is told to stop reading, and the
/// `onDemand` it gave ``connect(onDemand:onCancel:)`` runs once the reader has taken the buffer
/// below half of it, so a slow reader slows the transfer and memory stays bounded. The reader's
/// ``next()`` waits for a piece, the end, or the idle timeout; ``cancel(_:)`` (the reader gone,
/// `cancelAll()`, a logout) ends the channel and runs `onCancel`, which stops the transfer.
///
/// `@unchecked Sendable`: every mutable field is guarded by `lock`.
final class ByteChannel: @unchecked Sendable {
    /// What the channel holds at most before the transport is told to pause.
    let highWater: Int
    private let idleTimeout: Duration?
    private let lock = NSLock()
    private var pieces: [Data] = []
    /// The index of the next piece to hand out (pieces before it are emptied lazily).
    private var head = 0
    private var buffered = 0
    private var ended: NetworkError??
    private var waiter: CheckedContinuation<Data?, any Error>?
    /// Whether the transport was told to pause and waits for ``onDemand``.
    private var paused = false
    private var lastActivity = ContinuousClock.now
    /// When the reader began to wait, while it waits.
    private var waitingSince = ContinuousClock.now
    private var idleToken: Deadlines.Token?
    private var demand: (@Sendable () -> Void)?
    private var cancellation: (@Sendable (NetworkError) -> Void)?

    /// - Parameters:
    ///   - highWater: The most bytes buffered before the transport pauses.
    ///   - idleTimeout: How long the reader waits for a byte before the channel ends with
    ///     ``NetworkError/Code/timedOut``; `nil` for ever.
    init(highWater: Int = 256 << 10, idleTimeout: Duration? = nil) {
        self.highWater = max(highWater, 1)
        self.idleTimeout = idleTimeout
    }

    deinit {
        idleToken.map(Deadlines.shared.disarm)
    }

    /// Sets what resumes a paused transfer and what stops it: called once, by the transport,
    /// before its first ``push(_:)``. A channel already cancelled stops the transfer at once.
    func connect(onDemand: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable (NetworkError) -> Void) {
        let cancelled: NetworkError? = lock.withLock {
            if case .some(.some(let error)) = ended, error.code == .cancelled { return error }
            demand = onDemand
            cancellation = onCancel
            return nil
        }
        if let cancelled { onCancel(cancelled) }
    }

    /// What became of a piece the transport offered.
    enum Offer {
        /// Taken; the transport may go on.
        case taken
        /// Not taken: the buffer is full. The transport pauses and offers it again after
        /// ``onDemand``.
        case full
        /// Not taken: the channel has ended; the transport stops.
        case closed
    }

    /// Offers a piece of the body; taken unless the buffer holds ``highWater`` bytes already.
    func offer(_ piece: Data) -> Offer { add(piece, refusingWhenFull: true) }

    /// Adds a piece of the body whatever the buffer holds (a transport that cannot pause).
    /// - Returns: Whether the transport may go on reading: `false` once the buffer is over
    ///   ``highWater`` (then its `onDemand` runs when it may go on) or the channel has ended.
    @discardableResult
    func push(_ piece: Data) -> Bool { add(piece, refusingWhenFull: false) == .taken }

    /// Hands a piece to the waiting reader or buffers it. Past ``highWater``, a piece is refused
    /// (`refusingWhenFull`: ``Offer/full``, offered again later) or taken, and then the answer
    /// (``Offer/full`` too) tells the transport to wait for its `onDemand`.
    private func add(_ piece: Data, refusingWhenFull: Bool) -> Offer {
        guard !piece.isEmpty else { return .taken }
        lock.lock()
        guard ended == nil else {
            lock.unlock()
            return .closed
        }
        lastActivity = .now
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: piece)
            return .taken
        }
        if refusingWhenFull, buffered >= highWater {
            paused = true
            lock.unlock()
            return .full
        }
        pieces.append(piece)
        buffered += piece.count
        // A piece taken is never `.full` where full means "refused": the next one is refused.
        let full = !refusingWhenFull && buffered > highWater
        if full { paused = true }
        lock.unlock()
        return full ? .full : .taken
    }

    /// Whether the buffer holds more than ``highWater`` bytes.
    var isOverHighWater: Bool { lock.withLock { buffered > highWater } }

    /// The bytes received and not read yet.
    var bufferedByteCount: Int { lock.withLock { buffered } }

    /// Whether the channel has ended (complete, failed or cancelled).
    var isEnded: Bool { lock.withLock { ended != nil } }

    /// Ends the body: with `error`, or complete when `nil`. Pieces buffered are still read
    /// first; an error is thrown after them.
    func finish(_ error: NetworkError? = nil) {
        lock.lock()
        guard ended == nil else { return lock.unlock() }
        ended = .some(error)
        demand = nil
        cancellation = nil
        let waiter = self.waiter
        self.waiter = nil
        let token = idleToken
        idleToken = nil
        lock.unlock()
        token.map(Deadlines.shared.disarm)
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// Ends the channel for the reader and stops the transfer: buffered pieces are dropped,
    /// and the reader's next (or waiting) ``next()`` throws `error`, even when the body had
    /// arrived whole (the reader has not read it all).
    func cancel(_ error: NetworkError) {
        lock.lock()
        let (waiter, stop, token) = endLocked(error)
        lock.unlock()
        token.map(Deadlines.shared.disarm)
        waiter?.resume(throwing: error)
        stop?(error)
    }

    /// Ends the channel with `error` unless it failed already; called with `lock` held.
    /// - Returns: The waiting reader, what stops the transfer and the idle deadline, to be
    ///   answered, run and disarmed once the lock is released.
    private func endLocked(_ error: NetworkError) -> (
        CheckedContinuation<Data?, any Error>?, (@Sendable (NetworkError) -> Void)?, Deadlines.Token?
    ) {
        let stop = cancellation
        if case .some(.some) = ended {} else { ended = .some(error) }
        pieces.removeAll()
        head = 0
        buffered = 0
        demand = nil
        cancellation = nil
        let waiter = self.waiter
        self.waiter = nil
        let token = idleToken
        idleToken = nil
        return (waiter, stop, token)
    }

    /// The next piece, or `nil` at the end of a complete body.
    /// - Throws: ``NetworkError``: the transfer's failure, ``NetworkError/Code/timedOut`` after
    ///   the idle timeout, or ``NetworkError/Code/cancelled`` when the reader's task is.
    func next() async throws(NetworkError) -> Data? {
        do {
            return try await withTaskCancellationHandler {
                // What answers the reader (a piece, a failure) was stored under the lock; taking it
                // orders that for the thread sanitizer (see CONTRIBUTING, "Sanitizers").
                defer { lock.withLock {} }
                return try await withCheckedThrowingContinuation { continuation in wait(continuation) }
            } onCancel: {
                cancel(NetworkError(.cancelled, "The stream's reader was cancelled."))
            }
        } catch {
            throw NetworkError.wrapping(error)
        }
    }

    private func wait(_ continuation: CheckedContinuation<Data?, any Error>) {
        lock.lock()
        if head < pieces.count {
            let piece = pieces[head]
            pieces[head] = Data()
            head += 1
            buffered -= piece.count
            if head == pieces.count {
                pieces.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64, head * 2 > pieces.count {
                // A reader that never quite catches up must not leave a trail of empty slots.
                pieces.removeFirst(head)
                head = 0
            }
            let resumes = paused && buffered <= highWater / 2 ? demand : nil
            if resumes != nil { paused = false }
            lock.unlock()
            resumes?()
            return continuation.resume(returning: piece)
        }
        if let ended {
            lock.unlock()
            if let error = ended { return continuation.resume(throwing: error) }
            return continuation.resume(returning: nil)
        }
        // One reader never waits twice at once (see `ResponseBodyStream.Reading.claim()`); a
        // copied iterator could: it is refused, and the body stays the first wait's.
        guard waiter == nil else {
            lock.unlock()
            return continuation.resume(
                throwing: NetworkError(.invalidRequest, "The stream's body is being read by another task already."))
        }
        waiter = continuation
        waitingSince = .now
        // A paused transfer with an empty buffer (the reader was quick): it may go on.
        let resumes = paused ? demand : nil
        paused = false
        // Idle is silence while the reader waits: counted from its last byte or from the wait,
        // whichever is later (a reader that was busy kept the transfer paused meanwhile).
        if idleToken == nil, let idleTimeout { idleToken = armIdle(at: max(lastActivity, waitingSince) + idleTimeout) }
        lock.unlock()
        resumes?()
    }

    /// Arms the idle deadline; called with `lock` held.
    private func armIdle(at deadline: ContinuousClock.Instant) -> Deadlines.Token {
        Deadlines.shared.arm(at: deadline) { [weak self] in self?.idleDeadlinePassed() }
    }

    private func idleDeadlinePassed() {
        lock.lock()
        idleToken = nil
        // Nobody waits: the next wait arms the deadline again.
        guard ended == nil, waiter != nil, let idleTimeout else { return lock.unlock() }
        let due = max(lastActivity, waitingSince) + idleTimeout
        guard ContinuousClock.now >= due else {
            idleToken = armIdle(at: due)
            return lock.unlock()
        }
        // Decided and ended in one step: a piece that comes now finds the channel ended.
        let error = NetworkError(.timedOut, "The stream sent nothing for \(idleTimeout) (idle timeout).")
        let (waiter, stop, _) = endLocked(error)
        lock.unlock()
        waiter?.resume(throwing: error)
        stop?(error)
    }
}
