import Foundation

/// How a streamed answer is read: ``NetworkClient/stream(_:options:)``,
/// ``NetworkClient/events(_:options:lastEventID:)`` and ``NetworkClient/lines(_:options:)``.
public struct StreamOptions: Sendable, Hashable {
    /// How long the reader waits for a byte before the stream fails with
    /// ``NetworkError/Code/timedOut`` (an event stream connects again instead). Any byte resets
    /// it, heartbeat comments included. `nil` waits for ever. 60 seconds by default. The
    /// endpoint's own timeout is the deadline for the answer's head; a stream has no overall
    /// deadline.
    public var idleTimeout: Duration?
    /// The most bytes received and not yet read before the transfer pauses (the server is then
    /// slowed down by TCP): 256 KiB by default.
    public var bufferSize: Int
    /// The longest line of a JSON Lines stream, and the most data of one event (and the
    /// longest line) of an event stream, in bytes: past it the stream fails with
    /// ``NetworkError/Code/responseTooLarge``. 1 MiB by default.
    public var maximumElementSize: Int
    /// When an event stream connects again.
    public var reconnection: Reconnection

    /// Creates options.
    /// - Parameters:
    ///   - idleTimeout: The longest wait for a byte; `nil` for ever.
    ///   - bufferSize: The most bytes buffered before the transfer pauses.
    ///   - maximumElementSize: The longest line, or the most data of one event.
    ///   - reconnection: When an event stream connects again.
    public init(
        idleTimeout: Duration? = .seconds(60), bufferSize: Int = 256 << 10, maximumElementSize: Int = 1 << 20,
        reconnection: Reconnection = Reconnection()
    ) {
        self.idleTimeout = idleTimeout
        self.bufferSize = bufferSize
        self.maximumElementSize = maximumElementSize
        self.reconnection = reconnection
    }

    /// When an event stream whose connection dropped connects again: after a pause drawn at
    /// random between zero and a ceiling ("full jitter") that starts at ``initialDelay`` (or the
    /// server's `retry:`) and doubles with each failed attempt up to ``maximumDelay``, so many
    /// clients dropped at once do not come back at once.
    ///
    /// A connection that gave an event, or stayed up for ``healthyAfter``, starts the count
    /// again. The stream gives up after ``maximumAttempts`` attempts in a row that gave no event:
    /// it throws the last error, or ends when the server closed the connection cleanly. It never connects again after its reader's task is cancelled,
    /// ``NetworkClient/cancelAll()`` or a logout; nor after a 204, or a 4xx answer other than
    /// 401, 408 and 429.
    public struct Reconnection: Sendable, Hashable {
        /// The first ceiling of the pause; the server's `retry:` field replaces it (a tenth of a
        /// second at least). 1 second by default.
        public var initialDelay: Duration
        /// The largest ceiling of the pause: 30 seconds by default.
        public var maximumDelay: Duration
        /// How long a connection must stay up for the attempts to count from zero again: 30
        /// seconds by default.
        public var healthyAfter: Duration
        /// How many attempts in a row may fail before the stream gives up; `nil` for no limit.
        /// 10 by default.
        public var maximumAttempts: Int?

        /// Creates a reconnection policy.
        /// - Parameters:
        ///   - initialDelay: The first ceiling of the pause.
        ///   - maximumDelay: The largest ceiling.
        ///   - healthyAfter: How long a connection must last to start the count again.
        ///   - maximumAttempts: The most failed attempts in a row; `nil` for no limit.
        public init(
            initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30),
            healthyAfter: Duration = .seconds(30), maximumAttempts: Int? = 10
        ) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.healthyAfter = healthyAfter
            self.maximumAttempts = maximumAttempts
        }

        /// Never connects again: the first drop ends the stream with its error.
        public static let never = Reconnection(maximumAttempts: 0)

        /// The pause before attempt `attempt` (1 for the first after a drop), given the server's
        /// `retry:` in milliseconds: drawn by `random` between zero and the ceiling.
        func delay(attempt: Int, retry: Int?, random: (ClosedRange<Double>) -> Double) -> Duration {
            // A server's pause of nothing is taken as a tenth of a second: a server that closes
            // at once must not make the stream spin.
            let base = retry.map { Duration.milliseconds(max($0, 100)) } ?? initialDelay
            // The server's own pause is kept even when it is longer than the largest ceiling.
            let cap = max(maximumDelay.seconds, base.seconds)
            let ceiling = min(base.seconds * pow(2, Double(min(max(attempt - 1, 0), 30))), cap)
            // At least a tenth of a second (or the whole ceiling, when smaller): a server that
            // sends an event and closes, again and again, is not called back in a tight loop.
            let ceilingSeconds = max(ceiling, 0)
            return .seconds(random(min(0.1, ceilingSeconds)...ceilingSeconds))
        }
    }
}
