import Foundation

/// Retries idempotent requests that failed for reasons that may pass: transport failures and
/// timeouts, and the statuses 408, 429, 502, 503 and 504 (configurable). Waits grow
/// exponentially with full jitter, a `Retry-After` header is honoured up to a cap, and waiting
/// never blocks a thread. A non-idempotent request (a `POST`) is never sent twice unless its
/// endpoint opts in with ``Endpoint/idempotent()``. Nothing is retried after cancellation, and
/// cancelling during a wait ends it at once.
///
/// Place it outside the token and signing layers, so every attempt carries a current token and
/// a fresh signature.
public struct RetryInterceptor: Interceptor {
    /// How retries are spaced and which answers are retried.
    public struct Policy: Sendable, Hashable {
        /// The most attempts in all, the first included.
        public var maxAttempts: Int
        /// The wait before the first retry; it doubles for each further one.
        public var baseDelay: Duration
        /// The longest wait between attempts.
        public var maxDelay: Duration
        /// The longest `Retry-After` honoured; a longer one ends the retries.
        public var maxRetryAfter: Duration
        /// The statuses that are retried.
        public var retryableStatuses: Set<Int>

        /// Creates a policy.
        /// - Parameters:
        ///   - maxAttempts: The most attempts in all.
        ///   - baseDelay: The first wait.
        ///   - maxDelay: The longest wait.
        ///   - maxRetryAfter: The longest `Retry-After` honoured.
        ///   - retryableStatuses: The statuses that are retried.
        public init(
            maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(5),
            maxRetryAfter: Duration = .seconds(30), retryableStatuses: Set<Int> = [408, 429, 502, 503, 504]
        ) {
            self.maxAttempts = maxAttempts
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.maxRetryAfter = maxRetryAfter
            self.retryableStatuses = retryableStatuses
        }

        /// Three attempts, 200 ms doubling up to 5 s, `Retry-After` up to 30 s.
        public static let `default` = Policy()
    }

    private let policy: Policy

    /// Creates the layer.
    /// - Parameter policy: How retries are spaced and which answers are retried.
    public init(_ policy: Policy = .default) { self.policy = policy }

    /// ``InterceptorLayer/retry``.
    public var layer: InterceptorLayer { .retry }

    /// Sends the request, retrying as the policy says.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Not used; whether the request may be sent twice is ``HTTPRequest/isIdempotent``.
    ///   - next: The inner layers, run again for each attempt.
    /// - Returns: The first response that is not retried.
    /// - Throws: The last attempt's error; ``NetworkError/Code/cancelled`` when cancelled.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        guard request.isIdempotent, policy.maxAttempts > 1 else { return try await next(request) }
        var attempt = 1
        while true {
            let wait: Duration?
            do {
                let response = try await next(request)
                guard policy.retryableStatuses.contains(response.status), attempt < policy.maxAttempts else {
                    return response
                }
                wait = delay(after: attempt, retryAfter: response.headers["Retry-After"])
                guard let wait else { return response }
                try await pause(wait, timeline: request.timeline)
            } catch let error as NetworkError where [.transport, .timedOut].contains(error.code) {
                guard attempt < policy.maxAttempts, !Task.isCancelled else { throw error }
                try await pause(delay(after: attempt, retryAfter: nil) ?? policy.baseDelay, timeline: request.timeline)
            }
            attempt += 1
            request.timeline?.willResend(.retry)
        }
    }

    /// The wait before the next attempt: `Retry-After` when given (or `nil` when it exceeds the
    /// cap), else exponential backoff with full jitter.
    func delay(after attempt: Int, retryAfter: String?) -> Duration? {
        if let retryAfter, let seconds = Self.seconds(inRetryAfter: retryAfter) {
            return seconds <= policy.maxRetryAfter ? seconds : nil
        }
        let exponential = policy.baseDelay * (1 << min(attempt - 1, 20))
        let ceiling = min(exponential, policy.maxDelay)
        return ceiling * Double.random(in: 0.5...1)
    }

    /// Sleeps without blocking a thread; cancellation ends the wait with ``NetworkError/Code/cancelled``.
    private func pause(_ duration: Duration, timeline: TimelineRecorder?) async throws {
        let start = timeline?.now
        defer { if let start { timeline?.waited(.retryDelay, since: start) } }
        do {
            try await Task.sleep(for: duration)
        } catch {
            throw NetworkError(.cancelled, "The request was cancelled while waiting to retry.")
        }
    }

    /// `Retry-After` as delay-seconds or an HTTP date (read by ``HTTPDate``, in any of its
    /// three forms).
    static func seconds(inRetryAfter value: String) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = HTTPDate.parse(text) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
    }
}

extension Interceptor where Self == RetryInterceptor {
    /// A ``RetryInterceptor``.
    /// - Parameter policy: How retries are spaced and which answers are retried.
    /// - Returns: The layer.
    public static func retry(_ policy: RetryInterceptor.Policy = .default) -> Self {
        RetryInterceptor(policy)
    }
}
