import Foundation

/// A W3C Trace Context: the trace a request belongs to, and the vendor state passed on with
/// it. With a ``TraceContextInterceptor`` installed, every attempt of a request carries a
/// `traceparent` header with this trace id and a span id of its own, and `tracestate` as given.
///
/// Set the trace around the calls that belong to it; without one, each request starts a trace.
///
/// ```swift
/// let trace = TraceContext(traceparent: incomingParent, tracestate: incomingState) ?? .random()
/// let orders = try await TraceContext.$current.withValue(trace) {
///     try await client.send(.orders(page: 1))
/// }
/// ```
public struct TraceContext: Sendable, Hashable {
    /// The trace: 32 lowercase hexadecimal digits, not all zero.
    public let traceID: String
    /// The caller's span, the parent of the requests' spans: 16 lowercase hexadecimal digits,
    /// not all zero; `nil` when the requests begin the trace.
    public let parentID: String?
    /// Whether the trace is sampled (the `sampled` trace flag).
    public let isSampled: Bool
    /// The `tracestate` header passed on as it is, or `nil` for none.
    public let state: String?

    /// The trace the requests of the current task belong to.
    @TaskLocal public static var current: TraceContext?

    /// Creates a context from its parts, or `nil` when an id is malformed: a trace id that is
    /// not 32 lowercase hexadecimal digits (or all zero), or a parent id that is not 16 (or all
    /// zero). A state longer than 512 characters, or with a character outside printable ASCII,
    /// is dropped (the trace is kept, as the recommendation says).
    /// - Parameters:
    ///   - traceID: The trace.
    ///   - parentID: The caller's span, if any.
    ///   - isSampled: Whether the trace is sampled.
    ///   - state: The `tracestate` to pass on.
    public init?(traceID: String, parentID: String? = nil, isSampled: Bool = true, state: String? = nil) {
        guard Self.isID(traceID, digits: 32), parentID.map({ Self.isID($0, digits: 16) }) ?? true else { return nil }
        self.traceID = traceID
        self.parentID = parentID
        self.isSampled = isSampled
        self.state = state.flatMap { !$0.isEmpty && Self.isState($0) ? $0 : nil }
    }

    /// Reads a `traceparent` header (an incoming request's, a parent span's) and the
    /// `tracestate` that came with it; `nil` when the header is malformed or of version `ff`.
    /// A later version is read for its first four fields, as the recommendation says.
    /// - Parameters:
    ///   - traceparent: `00-<trace id>-<parent id>-<flags>`.
    ///   - tracestate: The state, if any.
    public init?(traceparent: String, tracestate: String? = nil) {
        let fields = traceparent.trimmingCharacters(in: .whitespaces).split(
            separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, Self.isHex(fields[0], digits: 2), fields[0] != "ff",
            fields[0] != "00" || fields.count == 4, Self.isHex(fields[3], digits: 2),
            let flags = UInt8(fields[3], radix: 16)
        else { return nil }
        self.init(
            traceID: String(fields[1]), parentID: String(fields[2]), isSampled: flags & 1 == 1, state: tracestate)
    }

    /// A new trace with a random id, sampled unless told.
    /// - Parameter isSampled: Whether it is sampled.
    /// - Returns: The context.
    public static func random(isSampled: Bool = true) -> TraceContext {
        var id = randomHex(bytes: 16)
        while id == String(repeating: "0", count: 32) { id = randomHex(bytes: 16) }
        return TraceContext(uncheckedTraceID: id, isSampled: isSampled)
    }

    private init(uncheckedTraceID: String, isSampled: Bool) {
        traceID = uncheckedTraceID
        parentID = nil
        self.isSampled = isSampled
        state = nil
    }

    /// The `traceparent` of one attempt: this trace, and `spanID` as its parent id.
    func traceparent(spanID: String) -> String {
        "00-\(traceID)-\(spanID)-\(isSampled ? "01" : "00")"
    }

    /// A new span id: 16 random lowercase hexadecimal digits, not all zero.
    static func newSpanID() -> String {
        var id = randomHex(bytes: 8)
        while id == String(repeating: "0", count: 16) { id = randomHex(bytes: 8) }
        return id
    }

    /// `bytes` random bytes as lowercase hexadecimal, from the pool nonces come from.
    private static func randomHex(bytes: Int) -> String {
        RandomPool.shared.hexString(ofBytes: bytes)
    }

    private static func isID(_ id: String, digits: Int) -> Bool {
        isHex(Substring(id), digits: digits) && id.utf8.contains { $0 != 0x30 }
    }

    /// Whether `text` is `digits` lowercase hexadecimal digits.
    private static func isHex(_ text: Substring, digits: Int) -> Bool {
        text.utf8.count == digits && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func isState(_ state: String) -> Bool {
        state.utf8.count <= 512 && state.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
    }
}

/// Sends every attempt with a W3C `traceparent` header (and `tracestate` when the trace has
/// one): the trace of ``TraceContext/current`` when the caller set one, or a new trace per
/// request. Each attempt (a retry, a send with a refreshed token) gets a span id of its own in
/// the same trace, and never a second header: a `traceparent` or `tracestate` already on the
/// request is replaced. An endpoint opts out with ``InterceptorLayer/traceContext`` in its
/// ``Endpoint/skippedLayers``.
///
/// ```swift
/// configuration.interceptors = [.traceContext(), .signing(.hmacSHA256(secret: secret))]
/// ```
///
/// The ids go to ``RequestTimeline/traceID`` and each ``RequestTimeline/Attempt/traceParent``,
/// for a ``RequestObserver`` that hands spans to a tracer.
public struct TraceContextInterceptor: Interceptor {
    /// Creates the layer.
    public init() {}

    /// ``InterceptorLayer/traceContext``.
    public var layer: InterceptorLayer { .traceContext }

    /// Gives the request its trace; the attempts' headers are written as each goes out.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Not used.
    ///   - next: The inner layers.
    /// - Returns: The inner layers' response.
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        var request = request
        if request.chosenTrace == nil { request.chosenTrace = TraceContext.current ?? .random() }
        request.sendsTrace = true
        return try await next(request)
    }
}

extension Interceptor where Self == TraceContextInterceptor {
    /// A ``TraceContextInterceptor``.
    /// - Returns: The layer.
    public static func traceContext() -> Self { TraceContextInterceptor() }
}

extension HTTPRequest {
    /// The request as one attempt sends it: with a `traceparent` of a new span of its trace
    /// (and its `tracestate`), replacing any the request had; unchanged without a trace.
    func stampingTrace() -> (request: HTTPRequest, traceParent: String?) {
        guard let trace else { return (self, nil) }
        var request = self
        let traceParent = trace.traceparent(spanID: TraceContext.newSpanID())
        request.headers["traceparent"] = traceParent
        request.headers["tracestate"] = trace.state
        return (request, traceParent)
    }
}
