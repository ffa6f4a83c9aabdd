import Foundation

/// Records one request's ``RequestTimeline`` for the client's observers, and tells them as it
/// goes. Made only when the client has observers (``HTTPRequest/timeline`` is `nil` otherwise,
/// and nothing is measured); it travels with the request through the layers, which tell it what
/// they wait for and why they send again. Once the request ended, what arrives late (an attempt
/// of a transfer shared with others) is not recorded.
///
/// `@unchecked Sendable`: every `var` is guarded by `lock`.
package final class TimelineRecorder: @unchecked Sendable {
    private let observers: [any RequestObserver]
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    /// The request as its endpoint built it.
    private let request: ObservedRequest
    private let lock = NSLock()
    private var timeline: RequestTimeline
    /// Why the next attempt is sent, when a layer said.
    private var nextReason: RequestTimeline.AttemptReason?
    private var hasEnded = false

    init(observers: [any RequestObserver], request: HTTPRequest) {
        self.observers = observers
        self.started = clock.now
        let observed = Self.observed(request)
        self.request = observed
        timeline = RequestTimeline(
            request: observed, startedAt: Date(), waits: [], attempts: [], total: .zero, envelope: nil)
        for observer in observers { observer.requestStarted(observed) }
    }

    /// The time now, to pass back to ``waited(_:since:)`` or ``decoded(since:)``.
    var now: ContinuousClock.Instant { clock.now }

    /// The request waited for `kind` from `start` until now.
    func waited(_ kind: RequestTimeline.WaitKind, since start: ContinuousClock.Instant) {
        let end = clock.now
        lock.withLock {
            guard !hasEnded else { return }
            timeline.waits.append(RequestTimeline.Wait(kind: kind, start: start - started, duration: end - start))
        }
    }

    /// The next attempt is sent for `reason` (a layer about to send the request again).
    func willResend(_ reason: RequestTimeline.AttemptReason) {
        lock.withLock { nextReason = reason }
    }

    /// What the cache did.
    func cache(_ outcome: RequestTimeline.CacheOutcome) {
        lock.withLock { if !hasEnded { timeline.cache = outcome } }
    }

    /// The request's transfer is open for identical requests to join.
    func startedSharedTransfer() {
        lock.withLock { if !hasEnded { timeline.sharedTransfer = .started } }
    }

    /// The request waited from `start` until now for a shared transfer's answer: one it joined,
    /// unless it started it.
    func joined(since start: ContinuousClock.Instant) {
        let end = clock.now
        lock.withLock {
            guard !hasEnded, timeline.sharedTransfer != .started else { return }
            timeline.sharedTransfer = .joined
            timeline.waits.append(
                RequestTimeline.Wait(kind: .sharedTransfer, start: start - started, duration: end - start))
        }
    }

    /// Checking and decoding the answer took from `start` until now.
    func decoded(since start: ContinuousClock.Instant) {
        let end = clock.now
        lock.withLock { if !hasEnded { timeline.decoding = (timeline.decoding ?? .zero) + (end - start) } }
    }

    /// Sends one attempt through `send` (the transport), recording its phases and outcome.
    func attempt(
        _ request: HTTPRequest, traceParent: String?,
        send: (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let sent = Self.observed(request)
        let (number, reason) = lock.withLock { () -> (Int, RequestTimeline.AttemptReason) in
            let number = timeline.attempts.count + 1
            defer { nextReason = nil }
            return (number, nextReason ?? (number == 1 ? .first : .other))
        }
        for observer in observers { observer.attemptStarted(number, request: sent) }
        let start = clock.now
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await send(request))
        } catch {
            result = .failure(error)
        }
        let duration = clock.now - start
        var attempt = RequestTimeline.Attempt(
            number: number, reason: reason, request: sent, start: start - started, duration: duration,
            phases: RequestTimeline.Phases(), connection: RequestTimeline.Connection(),
            bytes: RequestTimeline.ByteCounts(), traceParent: traceParent)
        attempt.bytes.requestBody = request.body.knownLength
        switch result {
        case .success(let response):
            attempt.describe(response)
        case .failure(let error):
            let failure = NetworkError.wrapping(error)
            attempt.failure = failure.code
            attempt.status = failure.status
        }
        let isRecorded = lock.withLock {
            guard !hasEnded else { return false }
            timeline.attempts.append(attempt)
            if let traceParent, timeline.traceID == nil { timeline.traceID = TraceContext.traceID(in: traceParent) }
            return true
        }
        if isRecorded {
            for observer in observers { observer.attemptEnded(attempt, of: self.request) }
        }
        return try result.get()
    }

    /// The request ended with `response` (decoded, or from the cache), or `failure`: its
    /// timeline goes to the observers, once.
    func end(_ response: HTTPResponse?, failure: NetworkError? = nil, decoder: JSONDecoder? = nil) {
        let end = clock.now
        let timeline = lock.withLock { () -> RequestTimeline? in
            guard !hasEnded else { return nil }
            hasEnded = true
            var timeline = self.timeline
            timeline.total = end - started
            timeline.status = response?.status ?? failure?.status
            timeline.failure = failure?.code
            if let response, let decoder, response.bodyFile == nil {
                timeline.envelope = EnvelopeReading(body: response.body, decoder: decoder)
            } else if let body = failure?.body, let decoder {
                timeline.envelope = EnvelopeReading(body: body, decoder: decoder)
            }
            return timeline
        }
        guard let timeline else { return }
        for observer in observers { observer.requestEnded(timeline) }
    }

    /// A request as an observer may see it: its URL and headers with secrets hidden, by the
    /// client's redactor and by the values the layers marked.
    static func observed(_ request: HTTPRequest) -> ObservedRequest {
        let hiding = ArchiveRedaction(redactor: request.redactor, secretValues: request.notes.secretValues)
        let suffix = request.query.isEmpty ? "" : "?" + request.query.encoded
        return ObservedRequest(
            id: request.notes.call, method: request.method, url: hiding.url(request.url.absoluteString + suffix),
            headers: HTTPHeaders(
                request.wireHeaders.fields.map {
                    HTTPHeaders.Field(name: $0.name, value: hiding.field($0.name, $0.value))
                }
            ))
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
