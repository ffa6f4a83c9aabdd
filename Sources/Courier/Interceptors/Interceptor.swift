import Foundation

/// One layer of the onion between ``NetworkClient/send(_:)`` and the ``Transport``.
///
/// A layer gets the request with its parameters still structured, and `next`, which runs every
/// inner layer and the transport. It can change the request, answer without calling `next`
/// (short-circuit), look at the response (status, headers, body bytes), or call `next` again
/// (retry: every inner layer runs again, so each attempt carries a fresh signature). Layers run
/// in the order of ``NetworkClient/Configuration/interceptors``, the first outermost, inside the
/// ``Session``'s own layer, which attaches the token.
///
/// ```swift
/// struct RequestID: Interceptor {
///     var layer: InterceptorLayer { "requestID" }
///     func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext)
///         async throws -> HTTPResponse
///     {
///         var request = request
///         request.headers["X-Request-ID"] = UUID().uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// Which layer this is. An endpoint opts out of layers by naming them in
    /// ``Endpoint/skippedLayers``.
    var layer: InterceptorLayer { get }

    /// Handles one request.
    /// - Parameters:
    ///   - request: The request as the outer layers left it.
    ///   - context: Facts about the endpoint and the client.
    ///   - next: Runs the inner layers and the transport; may be called more than once.
    /// - Returns: The response for the outer layers.
    /// - Throws: ``NetworkError``.
    func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
}

/// Runs the inner layers and the transport for a request.
public typealias InterceptorNext = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// The name of an interceptor layer; an open set.
public struct InterceptorLayer: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The layer's name.
    public let rawValue: String

    /// Creates a layer name.
    /// - Parameter rawValue: The name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a layer name from a literal.
    /// - Parameter value: The name.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// ``HeadersInterceptor``.
    public static let headers: InterceptorLayer = "headers"
    /// ``CommonParametersInterceptor``.
    public static let commonParameters: InterceptorLayer = "commonParameters"
    /// ``SigningInterceptor``.
    public static let signing: InterceptorLayer = "signing"
    /// The session (see ``Session``): skipping it sends the request without a token, and
    /// leaves its answer alone (no refresh, no login).
    public static let token: InterceptorLayer = "token"
    /// The session's silent login: skipping it keeps the token and its refresh, but returns
    /// log-in and ask-the-user answers as they are.
    public static let reLogin: InterceptorLayer = "reLogin"
    /// The retry layer.
    public static let retry: InterceptorLayer = "retry"
    /// The logging layer.
    public static let logging: InterceptorLayer = "logging"
    /// ``TraceContextInterceptor``.
    public static let traceContext: InterceptorLayer = "traceContext"
}

/// What an interceptor may know about the request it handles, beyond the request itself.
public struct InterceptorContext: Sendable {
    /// The envelope format of the client, to read business codes from responses.
    public var envelope: EnvelopeFormat { fields.value.envelope }
    /// The client's ``NetworkClient/Configuration/redactor``: what a layer that writes traffic
    /// down hides.
    public var redactor: Redactor { fields.value.redactor }
    /// The client's JSON decoder (its `userInfo` holds ``envelope``), so a layer reads the code
    /// the caller gets.
    var decoder: JSONDecoder { fields.value.decoder }
    private var owner: NetworkClient { fields.value.owner }
    /// The session's epoch when the request began: what it may still send in.
    var epoch: SessionEpoch { fields.value.epoch }
    /// The layers the request skips.
    var skippedLayers: Set<InterceptorLayer> { fields.value.skippedLayers }

    /// The stored properties, out of line (see ``CopyOnWrite``).
    private let fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        let envelope: EnvelopeFormat
        let redactor: Redactor
        let decoder: JSONDecoder
        let owner: NetworkClient
        let epoch: SessionEpoch
        let skippedLayers: Set<InterceptorLayer>
        /// Decodes an answer as the request's endpoint will, when a layer asks for its code (see
        /// ``ResponseDecoding``): the body is read once for the layer and the decoding.
        let decodeAhead: (@Sendable (HTTPResponse, JSONDecoder) -> Void)?
    }

    /// Creates the context of a request sent by `client` now (the client makes one per request;
    /// tests of a custom layer can too). Whether a request may be sent twice is the request's
    /// own ``HTTPRequest/isIdempotent``.
    /// - Parameter client: The client the request is sent by.
    public init(client: NetworkClient) {
        self.init(client: client, epoch: client.session.currentEpoch(), skipping: [])
    }

    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    init(
        client: NetworkClient, epoch: SessionEpoch, skipping skippedLayers: Set<InterceptorLayer>,
        decodeAhead: (@Sendable (HTTPResponse, JSONDecoder) -> Void)? = nil
    ) {
        fields = CopyOnWrite(
            Fields(
                envelope: client.configuration.envelope, redactor: client.configuration.redactor,
                decoder: client.decodingContext.decoder, owner: client, epoch: epoch, skippedLayers: skippedLayers,
                decodeAhead: decodeAhead))
    }

    /// The business code of a response whose body is an envelope in ``envelope``'s format, as
    /// the client decodes it, or `nil` when the body is not one, or its success flag (when the
    /// format has one) says the call succeeded.
    ///
    /// The body is read once for every layer that asks and for the client's own checks. When
    /// the request's endpoint decodes an envelope with the client's decoder (`.envelope`), the
    /// client would accept the answer (its status and media type, a body of at most 8 MB), and
    /// the request is still wanted (not cancelled, its session not ended), the first layer to
    /// ask has the envelope decoded, payload included, in that same pass, and the endpoint's
    /// decoding uses it rather than reading the body again.
    /// - Parameter response: The response.
    /// - Returns: The code.
    public func businessCode(in response: HTTPResponse) -> BusinessCode? {
        // An answer the client will decode: its envelope now, for this layer and the decoding.
        if let decodeAhead = fields.value.decodeAhead, !Task.isCancelled, epoch.isCurrent,
            owner.validation.accepts(response)
        {
            decodeAhead(response, decoder)
        }
        return response.envelope(decoder).failureCode
    }

    /// The client sending this request, for a request of the layer's own: requests sent through
    /// it skip `layers`, and belong to this request's session epoch (after a logout they are
    /// refused). Name at least the calling layer: a layer that sends through itself can wait
    /// for itself forever.
    /// - Parameter layers: The layers to skip.
    /// - Returns: The handle.
    public func client(skipping layers: Set<InterceptorLayer>) -> ClientHandle {
        ClientHandle(client: owner, skipping: layers, epoch: epoch)
    }

    /// The client for the session's own requests (a refresh, a silent login): without the
    /// session's layer, and not cancelled by ``NetworkClient/cancelAll()``, which leaves the
    /// session alone; a logout cancels them.
    func sessionClient() -> ClientHandle {
        ClientHandle(client: owner, skipping: [.token, .reLogin], epoch: epoch, isSessionWork: true)
    }
}

/// Runs a list of interceptors around a transport.
struct InterceptorChain: Sendable {
    let interceptors: [any Interceptor]
    let transport: any Transport

    /// Sends `request` through every layer not in `skipped`, outermost first.
    func send(_ request: HTTPRequest, context: InterceptorContext, skipping skipped: Set<InterceptorLayer>)
        async throws -> HTTPResponse
    {
        try await send(request, from: 0, context: context, skipping: skipped)
    }

    private func send(
        _ request: HTTPRequest, from index: Int, context: InterceptorContext, skipping skipped: Set<InterceptorLayer>
    ) async throws -> HTTPResponse {
        let index = firstLayer(from: index, skipping: skipped)
        guard index < interceptors.count else {
            // The last step before the wire: whatever a layer waited for (a token, a retry's
            // pause), nothing goes out for a session that has ended since the request began.
            try context.epoch.check("the request was about to be sent")
            // Most requests are neither traced nor observed: they go as they are, uncopied.
            if !request.isObserved { return try await transport.send(request) }
            let (sent, traceParent) = request.stampingTrace()
            return try await attempt(sent, traceParent: traceParent)
        }
        let next = index + 1
        return try await interceptors[index].intercept(request, context: context) { request in
            try await send(request, from: next, context: context, skipping: skipped)
        }
    }

    /// The index of the first layer from `index` on that is not in `skipped`. Not inlined: a
    /// request waiting in flight keeps a frame of ``send(_:from:context:skipping:)`` for each
    /// layer, and the hashing would take room in each.
    @inline(never)
    private func firstLayer(from index: Int, skipping skipped: Set<InterceptorLayer>) -> Int {
        var index = index
        // Most requests skip nothing: no layer's name is hashed for them.
        while index < interceptors.count, !skipped.isEmpty, skipped.contains(interceptors[index].layer) { index += 1 }
        return index
    }

    /// Sends `request` as one attempt, told to its timeline when it has one.
    private func attempt(_ request: HTTPRequest, traceParent: String?) async throws -> HTTPResponse {
        guard let timeline = request.timeline, let attempt = timeline.attemptStarting(request, traceParent: traceParent)
        else { return try await transport.send(request) }
        do {
            let response = try await transport.send(request)
            timeline.attemptEnded(attempt, response: response)
            return response
        } catch {
            timeline.attemptEnded(attempt, response: nil, error: error)
            throw error
        }
    }
}

extension InterceptorContext: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}
