import Foundation

/// Records one request's ``RequestTimeline`` for the client's observers, and tells them as it
/// goes. Made only when the client has observers (``HTTPRequest/timeline`` is `nil` otherwise,
/// and nothing is measured); it travels with the request through the layers, which tell it what
/// they wait for and why they send again. Once the request ended, what arrives late (an attempt
/// of a transfer shared with others) is not recorded.
///
/// Its state sits with its lock in one allocation. Observers are told with the lock held: one
/// request's events reach them in order, and none after its end.
package struct TimelineRecorder: Sendable {
    private let state: Locked<State>

    private struct State {
        let observers: [any RequestObserver]
        let started: ContinuousClock.Instant
        /// The request as its endpoint built it.
        let request: ObservedRequest
        var timeline: RequestTimeline
        /// Why the next attempt is sent, when a layer said.
        var nextReason: RequestTimeline.AttemptReason?
        var hasEnded = false
        /// The attempts begun so far.
        var attemptCount = 0
        /// The attempt under way, if any.
        var openAttempt: AttemptStart?
    }

    init(observers: [any RequestObserver], request: borrowing HTTPRequest) {
        let observed = ObservedRequest(request)
        let timeline = RequestTimeline(request: observed, startedAt: Date(), waits: [], attempts: [], total: .zero)
        state = Locked(State(observers: observers, started: .now, request: observed, timeline: timeline))
        state.withLock { state in
            for observer in state.observers { observer.requestStarted(observed) }
        }
    }

    /// The time now, to pass back to ``waited(_:since:)`` or ``decoded(since:)``.
    var now: ContinuousClock.Instant { .now }

    /// The request waited for `kind` from `start` until now.
    func waited(_ kind: RequestTimeline.WaitKind, since start: ContinuousClock.Instant) {
        let end = ContinuousClock.now
        state.withLock { state in
            guard !state.hasEnded else { return }
            state.timeline.waits.append(.init(kind: kind, start: start - state.started, duration: end - start))
        }
    }

    /// The next attempt is sent for `reason` (a layer about to send the request again).
    func willResend(_ reason: RequestTimeline.AttemptReason) {
        state.withLock { $0.nextReason = reason }
    }

    /// What the cache did.
    func cache(_ outcome: RequestTimeline.CacheOutcome) {
        state.withLock { if !$0.hasEnded { $0.timeline.cache = outcome } }
    }

    /// The request's transfer is open for identical requests to join.
    func startedSharedTransfer() {
        state.withLock { if !$0.hasEnded { $0.timeline.sharedTransfer = .started } }
    }

    /// The request waited from `start` until now for the answer of a shared transfer it joined.
    func joined(since start: ContinuousClock.Instant) {
        let end = ContinuousClock.now
        state.withLock { state in
            guard !state.hasEnded else { return }
            state.timeline.sharedTransfer = .joined
            state.timeline.waits.append(
                .init(kind: .sharedTransfer, start: start - state.started, duration: end - start))
        }
    }

    /// Checking and decoding the answer took from `start` until now.
    func decoded(since start: ContinuousClock.Instant) {
        let took = ContinuousClock.now - start
        state.withLock { if !$0.hasEnded { $0.timeline.decoding = ($0.timeline.decoding ?? .zero) + took } }
    }

    /// An attempt under way: its number, reason, start and request as sent.
    struct AttemptStart: Sendable {
        let number: Int
        let reason: RequestTimeline.AttemptReason
        let start: ContinuousClock.Instant
        let request: ObservedRequest
        let traceParent: String?
        /// The size of the request's body when it is in memory.
        let bodyLength: Int?
    }

    /// An attempt is about to go to the transport: the observers hear of it. `nil` once the
    /// request ended (a transfer it started goes on for identical requests that share it):
    /// then nothing of the attempt is recorded.
    func attemptStarting(_ request: HTTPRequest, traceParent: String?) -> AttemptStart? {
        let sent = ObservedRequest(request)
        let bodyLength = request.body.knownLength
        return state.withLock { state in
            guard !state.hasEnded else { return nil }
            state.attemptCount += 1
            let number = state.attemptCount
            let reason = state.nextReason ?? (number == 1 ? .first : .other)
            state.nextReason = nil
            if state.timeline.traceID == nil, let trace = request.trace {
                state.timeline.traceID = trace.traceID
                state.timeline.parentID = trace.parentID
            }
            let attempt = AttemptStart(
                number: number, reason: reason, start: .now, request: sent, traceParent: traceParent,
                bodyLength: bodyLength)
            state.openAttempt = attempt
            for observer in state.observers { observer.attemptStarted(number, request: sent) }
            return attempt
        }
    }

    /// The attempt `started` ended with `response`, or failed with `error`.
    func attemptEnded(_ started: AttemptStart, response: HTTPResponse?, error: (any Error)? = nil) {
        var attempt = started.ended(after: .now - started.start)
        if let response {
            attempt.describe(response)
        } else if let error {
            let failure = NetworkError.wrapping(error)
            attempt.failure = failure.code
            attempt.status = failure.status
        }
        state.withLock { state in
            // Ended already: the request's end closed this attempt as cancelled.
            guard !state.hasEnded, state.openAttempt?.number == started.number else { return }
            state.openAttempt = nil
            attempt.start = started.start - state.started
            state.timeline.attempts.append(attempt)
            for observer in state.observers { observer.attemptEnded(attempt, of: state.request) }
        }
    }

    /// The request ended with `response` (decoded, or from the cache), or `failure`: its
    /// timeline goes to the observers, once. An attempt still under way (a transfer it started
    /// goes on for identical requests that share it) ends first, as cancelled for this request.
    func end(_ response: HTTPResponse?, failure: NetworkError? = nil, decoder: JSONDecoder? = nil) {
        let end = ContinuousClock.now
        // The body, for the business code when asked: an envelope's, never a file's.
        var codeReader: BusinessCodeReader?
        if let decoder, let response, response.bodyFile == nil, let view = response.envelopeIfRead(decoder) {
            // A layer or the validation read it already: the code, and no body to keep.
            codeReader = BusinessCodeReader(code: view.failureCode)
        } else if let decoder, let body = (response?.bodyFile == nil ? response?.body : nil) ?? failure?.body,
            !body.isEmpty, body.count <= BusinessCodeReader.largestBody
        {
            codeReader = BusinessCodeReader(body: body, decoder: decoder)
        }
        state.withLock { state in
            guard !state.hasEnded else { return }
            state.hasEnded = true
            if let open = state.openAttempt {
                state.openAttempt = nil
                var attempt = open.ended(after: end - open.start)
                attempt.start = open.start - state.started
                // A cancelled attempt may have sent none of its body.
                attempt.bytes.requestBody = nil
                attempt.failure = .cancelled
                state.timeline.attempts.append(attempt)
                for observer in state.observers { observer.attemptEnded(attempt, of: state.request) }
            }
            // The recorder keeps nothing of the timeline: it may be freed on a transport's
            // thread, which should not be the one to free what the request gathered.
            var timeline = state.timeline
            state.timeline.attempts = []
            state.timeline.waits = []
            timeline.total = end - state.started
            timeline.status = response?.status ?? failure?.status
            timeline.failure = failure?.code
            timeline.codeReader = codeReader
            for observer in state.observers { observer.requestEnded(timeline) }
        }
    }
}

extension TimelineRecorder.AttemptStart {
    /// The attempt as it ended `duration` after it began (its start is the caller's to set).
    fileprivate func ended(after duration: Duration) -> RequestTimeline.Attempt {
        RequestTimeline.Attempt(
            number: number, reason: reason, request: request, start: .zero, duration: duration,
            phases: RequestTimeline.Phases(), connection: RequestTimeline.Connection(),
            bytes: RequestTimeline.ByteCounts(requestBody: bodyLength), traceParent: traceParent)
    }
}

/// Reads an answer's business code once, when first asked, and then lets the body go: a
/// timeline an observer keeps holds no body (a login's answer holds a token).
struct BusinessCodeReader: Sendable {
    /// The largest body kept for the code: 64 KiB (an envelope with a code is smaller).
    static let largestBody = 64 << 10

    private enum Reading: Sendable {
        case unread(Data, JSONDecoder)
        case read(BusinessCode?)
    }

    private let reading: Locked<Reading>

    init(body: Data, decoder: JSONDecoder) {
        reading = Locked(.unread(body, decoder))
    }

    /// A reader of a code read already.
    init(code: BusinessCode?) {
        reading = Locked(.read(code))
    }

    var code: BusinessCode? {
        reading.withLock { reading in
            if case .unread(let body, let decoder) = reading {
                reading = .read(EnvelopeView.read(body, with: decoder).failureCode)
            }
            guard case .read(let code) = reading else { return nil }
            return code
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
