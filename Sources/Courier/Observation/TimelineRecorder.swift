import Foundation

/// Records one request's ``RequestTimeline`` for the client's observers, and tells them as it
/// goes. Made only when the client has observers (``HTTPRequest/timeline`` is `nil` otherwise,
/// and nothing is measured); it travels with the request through the layers, which tell it what
/// they wait for and why they send again. Once the request ended, what arrives late (an attempt
/// of a transfer shared with others) is not recorded.
///
/// `@unchecked Sendable`: every `var` is guarded by `mutex`, a plain one: `NSLock` costs several
/// allocations on Linux, and a recorder is made for every request.
package final class TimelineRecorder: @unchecked Sendable {
    private let observers: [any RequestObserver]
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    /// The request as its endpoint built it.
    private let request: ObservedRequest
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var timeline: RequestTimeline
    /// Why the next attempt is sent, when a layer said.
    private var nextReason: RequestTimeline.AttemptReason?
    private var hasEnded = false
    /// The attempts begun so far.
    private var attemptCount = 0
    /// The attempt under way, if any.
    private var openAttempt: AttemptStart?

    init(observers: [any RequestObserver], request: HTTPRequest) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        self.observers = observers
        self.started = clock.now
        let observed = ObservedRequest(request)
        self.request = observed
        timeline = RequestTimeline(
            request: observed, startedAt: Date(), waits: [], attempts: [], total: .zero, codeReader: nil)
        for observer in observers { observer.requestStarted(observed) }
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func lock() { pthread_mutex_lock(mutex) }
    private func unlock() { pthread_mutex_unlock(mutex) }

    /// The time now, to pass back to ``waited(_:since:)`` or ``decoded(since:)``.
    var now: ContinuousClock.Instant { clock.now }

    /// The request waited for `kind` from `start` until now.
    func waited(_ kind: RequestTimeline.WaitKind, since start: ContinuousClock.Instant) {
        let end = clock.now
        lock()
        if !hasEnded {
            timeline.waits.append(RequestTimeline.Wait(kind: kind, start: start - started, duration: end - start))
        }
        unlock()
    }

    /// The next attempt is sent for `reason` (a layer about to send the request again).
    func willResend(_ reason: RequestTimeline.AttemptReason) {
        lock()
        nextReason = reason
        unlock()
    }

    /// What the cache did.
    func cache(_ outcome: RequestTimeline.CacheOutcome) {
        lock()
        if !hasEnded { timeline.cache = outcome }
        unlock()
    }

    /// The request's transfer is open for identical requests to join.
    func startedSharedTransfer() {
        lock()
        if !hasEnded { timeline.sharedTransfer = .started }
        unlock()
    }

    /// The request waited from `start` until now for the answer of a shared transfer it joined.
    func joined(since start: ContinuousClock.Instant) {
        let end = clock.now
        lock()
        if !hasEnded {
            timeline.sharedTransfer = .joined
            timeline.waits.append(
                RequestTimeline.Wait(kind: .sharedTransfer, start: start - started, duration: end - start))
        }
        unlock()
    }

    /// Checking and decoding the answer took from `start` until now.
    func decoded(since start: ContinuousClock.Instant) {
        let end = clock.now
        lock()
        if !hasEnded { timeline.decoding = (timeline.decoding ?? .zero) + (end - start) }
        unlock()
    }

    /// An attempt under way: its number, reason, start and request as sent.
    struct AttemptStart: Sendable {
        let number: Int
        let reason: RequestTimeline.AttemptReason
        let start: ContinuousClock.Instant
        let request: ObservedRequest
        let traceParent: String?
    }

    /// An attempt is about to go to the transport: the observers hear of it. `nil` once the
    /// request ended (a transfer it started goes on for identical requests that share it):
    /// then nothing of the attempt is recorded.
    func attemptStarting(_ request: HTTPRequest, traceParent: String?) -> AttemptStart? {
        let sent = ObservedRequest(request)
        // Observers are told under the lock: one request's events reach them in order, and none
        // after its end.
        lock()
        defer { unlock() }
        guard !hasEnded else { return nil }
        attemptCount += 1
        let number = attemptCount
        let reason = nextReason ?? (number == 1 ? .first : .other)
        nextReason = nil
        if timeline.traceID == nil, let trace = request.trace {
            timeline.traceID = trace.traceID
            timeline.parentID = trace.parentID
        }
        let attempt = AttemptStart(
            number: number, reason: reason, start: clock.now, request: sent, traceParent: traceParent)
        openAttempt = attempt
        for observer in observers { observer.attemptStarted(number, request: sent) }
        return attempt
    }

    /// The attempt `started` ended with `response`, or failed with `error`.
    func attemptEnded(
        _ started: AttemptStart, of request: HTTPRequest, response: HTTPResponse?, error: (any Error)? = nil
    ) {
        var attempt = started.ended(after: clock.now - started.start, since: self.started)
        attempt.bytes.requestBody = request.body.knownLength
        if let response {
            attempt.describe(response)
        } else if let error {
            let failure = NetworkError.wrapping(error)
            attempt.failure = failure.code
            attempt.status = failure.status
        }
        lock()
        defer { unlock() }
        // Ended already: the request's end closed this attempt as cancelled.
        guard !hasEnded, openAttempt?.number == started.number else { return }
        openAttempt = nil
        timeline.attempts.append(attempt)
        for observer in observers { observer.attemptEnded(attempt, of: self.request) }
    }

    /// The request ended with `response` (decoded, or from the cache), or `failure`: its
    /// timeline goes to the observers, once. An attempt still under way (a transfer it started
    /// goes on for identical requests that share it) ends first, as cancelled for this request.
    func end(_ response: HTTPResponse?, failure: NetworkError? = nil, decoder: JSONDecoder? = nil) {
        let end = clock.now
        var reader: BusinessCodeReader?
        if let decoder, let body = response.map({ $0.bodyFile == nil ? $0.body : Data() }) ?? failure?.body,
            !body.isEmpty, body.count <= BusinessCodeReader.largestBody
        {
            reader = BusinessCodeReader(body: body, decoder: decoder)
        }
        lock()
        defer { unlock() }
        guard !hasEnded else { return }
        hasEnded = true
        if let open = openAttempt {
            openAttempt = nil
            var attempt = open.ended(after: end - open.start, since: started)
            attempt.failure = .cancelled
            timeline.attempts.append(attempt)
            for observer in observers { observer.attemptEnded(attempt, of: request) }
        }
        var timeline = self.timeline
        // What the request kept goes with the copy: the recorder may be freed on a transport's
        // thread, which should not be the one to free it.
        self.timeline.attempts = []
        self.timeline.waits = []
        timeline.total = end - started
        timeline.status = response?.status ?? failure?.status
        timeline.failure = failure?.code
        if let reader { timeline.codeReader = { reader.code } }
        for observer in observers { observer.requestEnded(timeline) }
    }
}

extension TimelineRecorder.AttemptStart {
    /// The attempt as it ended `duration` after it began, its start counted from `requestStart`.
    fileprivate func ended(after duration: Duration, since requestStart: ContinuousClock.Instant)
        -> RequestTimeline.Attempt
    {
        RequestTimeline.Attempt(
            number: number, reason: reason, request: request, start: start - requestStart, duration: duration,
            phases: RequestTimeline.Phases(), connection: RequestTimeline.Connection(),
            bytes: RequestTimeline.ByteCounts(), traceParent: traceParent)
    }
}

/// Reads an answer's business code once, when first asked, and then lets the body go.
///
/// `@unchecked Sendable`: `body` and `read` are guarded by `lock`.
private final class BusinessCodeReader: @unchecked Sendable {
    /// The largest body kept for the code: 64 KiB (an envelope with a code is smaller).
    static let largestBody = 64 << 10

    private let lock = NSLock()
    private var body: Data?
    private var read: BusinessCode?
    private let decoder: JSONDecoder

    init(body: Data, decoder: JSONDecoder) {
        self.body = body
        self.decoder = decoder
    }

    var code: BusinessCode? {
        lock.withLock {
            if let body {
                read = EnvelopeProbe.code(in: body, decoder: decoder)
                self.body = nil
            }
            return read
        }
    }
}

extension RequestTimeline.Attempt {
    /// Fills what the answer tells: the status, and the phases, connection and byte counts its
    /// transport measured.
    fileprivate mutating func describe(_ response: HTTPResponse) {
        status = response.status
        connection.httpVersion = response.httpVersion
        phases = RequestTimeline.Phases(of: response)
        if let facts = response.exchangeFacts {
            connection.isReused = facts.isReused
            connection.remoteAddress = facts.remoteAddress
            bytes.requestHeaders = facts.requestHeaderBytes
            if let sent = facts.requestBodyBytes { bytes.requestBody = sent }
            bytes.responseHeaders = facts.responseHeaderBytes
            bytes.responseBody = facts.responseBodyBytes
        }
        if bytes.responseBody == nil, response.bodyFile == nil, response.streamedBody == nil {
            bytes.responseBody = response.body.count
        }
    }
}

extension HTTPBody {
    /// The size of an in-memory body; `nil` for a file or a multipart form, whose size the
    /// transport reports.
    fileprivate var knownLength: Int? {
        switch self {
        case .none: 0
        case .form(let parameters): parameters.encoded.utf8.count
        case .json(let data), .data(let data, _): data.count
        case .file, .multipart: nil
        }
    }
}
