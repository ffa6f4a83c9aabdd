import Foundation

/// The entry point: sends typed ``Endpoint`` values to one backend and returns their payloads.
///
/// ```swift
/// let client = NetworkClient(configuration: .init(baseURL: URL(string: "https://api.example.com/v1/")!))
/// let orders = try await client.send(.orders(page: 1))
/// ```
///
/// The actor's state is the requests in flight (for ``cancelAll()`` and the activity count),
/// kept in a lock-based registry so a request never waits for the actor. Building, sending and
/// decoding run off the actor, so many concurrent ``send(_:)`` calls do not queue behind one
/// executor.
public actor NetworkClient {
    /// The settings the client was created with.
    public nonisolated let configuration: Configuration
    nonisolated let chain: InterceptorChain
    nonisolated let encoder: JSONEncoder
    nonisolated let base: URLJoiner.Base
    nonisolated let decodingContext: DecodingContext
    nonisolated let validation: ResponseValidation
    nonisolated let gate: ReachabilityGate?
    /// The configuration's session, or one nobody signs in to.
    nonisolated let session: Session

    /// The latest exchanges, when the configuration keeps them.
    nonisolated let trafficLog: TrafficLog?
    nonisolated let inFlight = InFlightRegistry()
    /// The open WebSockets, each in the session epoch it was opened in.
    private nonisolated let openSockets = InFlightRegistry()
    /// How many times ``cancelAll()`` ran: a WebSocket that opened meanwhile is closed.
    private nonisolated let cancelAllCount = Locked<UInt64>(0)
    nonisolated let shared = SharedTransfers()
    /// Whether a request is given a trace as it is made (the trace-context layer is installed).
    nonisolated let carriesTraces: Bool

    /// Creates a client.
    /// - Parameter configuration: Base URL, timeouts, envelope format, session, cache, validation
    ///   and transport.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.session = configuration.session ?? .signedOut()
        // Every transport sends one request at a time; the client keeps the rest of the contract.
        let transport = SendContract(configuration.transport ?? Configuration.defaultTransport())
        let log = configuration.keptExchanges > 0 ? TrafficLog(capacity: configuration.keptExchanges) : nil
        self.trafficLog = log
        self.carriesTraces = configuration.interceptors.contains {
            $0.layer == .traceContext || $0 is TraceContextInterceptor
        }
        self.chain = InterceptorChain(
            interceptors: (configuration.session.map { [SessionLayer(session: $0)] } ?? [])
                + configuration.interceptors,
            transport: log.map { ArchivingTransport(inner: transport, log: $0) } ?? transport)
        self.encoder = configuration.encoder.copy()
        self.base = URLJoiner.Base(configuration.baseURL)
        self.decodingContext = DecodingContext(
            decoder: configuration.decoder.copy(addingUserInfo: [
                .envelopeFormat: configuration.envelope,
                .envelopeNumberKeys: Set(
                    configuration.interceptors.compactMap { ($0 as? SigningInterceptor)?.serverTimeField }),
            ]),
            envelope: configuration.envelope)
        self.gate = configuration.reachability.map {
            ReachabilityGate(monitor: $0, policy: configuration.reachabilityPolicy)
        }
        self.validation = ResponseValidation(
            acceptableStatusCodes: configuration.acceptableStatusCodes,
            acceptableContentTypes: Set(configuration.acceptableContentTypes.map { $0.lowercased() }),
            decoder: decodingContext.decoder)
        session.attach(self)
    }

    /// Sends an endpoint and returns its decoded payload.
    ///
    /// A request whose task is already cancelled is never sent. Cancelling the calling task, or
    /// ``cancelAll()``, stops the transfer; for a transfer shared with identical requests in
    /// flight (``Endpoint/sharingIdenticalRequests(_:)``), the caller stops waiting at once and
    /// the transfer stops when no caller waits for it.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload.
    /// - Throws: ``NetworkError``, always: ``NetworkError/Code/cancelled``,
    ///   ``NetworkError/Code/timedOut``, ``NetworkError/Code/httpStatus``,
    ///   ``NetworkError/Code/business``, ``NetworkError/Code/decodingFailed``, …
    public nonisolated func send<Response>(_ endpoint: Endpoint<Response>) async throws(NetworkError) -> Response {
        // Straight to the full `reply`: each call between adds a frame to every request in flight.
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: nil).value
    }

    /// Sends an endpoint and returns its decoded payload together with the answer it came in:
    /// status, headers, timings, and the envelope's message and other fields.
    ///
    /// It sends, checks and decodes as ``send(_:)`` does, and throws the same errors.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload and its answer.
    /// - Throws: ``NetworkError``, as ``send(_:)`` does.
    public nonisolated func reply<Response>(to endpoint: Endpoint<Response>) async throws(NetworkError)
        -> Reply<Response>
    {
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: nil)
    }

    /// ``reply(to:)`` for a request of session epoch `epoch` (a layer's own request), or of the
    /// epoch now when `nil`; the session's own (`isSessionWork`) is not cancelled by
    /// ``cancelAll()``.
    nonisolated func reply<Response>(
        to endpoint: Endpoint<Response>, in epoch: SessionEpoch?, isSessionWork: Bool = false
    ) async throws(NetworkError) -> Reply<Response> {
        try await reply(to: endpoint, request: try makeRequest(endpoint), in: epoch, isSessionWork: isSessionWork)
    }

    /// What the reachability monitor says now (``ReachabilityStatus/unknown`` without one).
    public nonisolated var reachabilityStatus: ReachabilityStatus {
        configuration.reachability?.status ?? .unknown
    }

    /// The reachability status now, then every change, for an "offline" or "waiting" banner.
    /// Without a monitor, one `unknown` and then nothing.
    /// - Returns: The stream.
    public nonisolated func reachabilityUpdates() -> AsyncStream<ReachabilityStatus> {
        configuration.reachability?.statusUpdates() ?? AsyncStream { $0.yield(.unknown) }
    }

    /// Cancels every request in flight, including those waiting to be online, for a token, or
    /// still reading the cache (none is sent, nor given an answer it read from the cache
    /// without the network). Each one throws ``NetworkError/Code/cancelled``. No request sent
    /// afterwards shares a transfer with one that was in flight (see
    /// ``Endpoint/sharingIdenticalRequests(_:)``). The session goes on as it was (a refresh
    /// under way still stores its token): on logout call ``Session/logOut()``, which cancels
    /// these requests too.
    public nonisolated func cancelAll() {
        cancelAllCount.withLock { $0 += 1 }
        shared.detachAll()
        inFlight.cancelAll()
        openSockets.cancelAll()
    }

    /// Cancels the requests that began in a session epoch before `epoch`, and closes the
    /// WebSockets opened in one: a logout's part.
    nonisolated func cancelWork(before epoch: UInt64) {
        inFlight.cancel(before: epoch)
        openSockets.cancel(before: epoch)
    }

    /// Keeps an open WebSocket of session epoch `epoch` until the returned closure runs (when
    /// the socket goes): ``cancelAll()`` and the end of its epoch close it for good, and drop what
    /// it holds for its reader, even after the server closed it.
    nonisolated func keep(_ socket: WebSocket, in epoch: UInt64) -> @Sendable () -> Void {
        let entry = openSockets.add(epoch: epoch)
        entry.attach { [session, weak socket] in
            let error =
                session.epochNumber == epoch
                ? NetworkError(.cancelled, "The WebSocket was closed by cancelAll().")
                : session.endError(of: epoch, while: "the WebSocket was open")
            socket?.stop(error, code: .goingAway)
        }
        return { [openSockets] in openSockets.remove(entry) }
    }

    /// The client's layers around `transport` instead of the client's transport.
    nonisolated func chain(through transport: any Transport) -> InterceptorChain {
        InterceptorChain(interceptors: chain.interceptors, transport: transport)
    }

    /// The certificate authorities and pins of the client's transport, for its WebSockets;
    /// refused for a transport whose settings a WebSocket cannot know (it would connect
    /// without the pins, or reach the network for a transport that never does).
    nonisolated func webSocketTLS(for request: HTTPRequest) throws(NetworkError) -> TLSOptions {
        switch configuration.transport {
        case nil: return TLSOptions()
        case let session as URLSessionTransport: return session.tls
        default: break
        }
        #if os(Linux)
            if let curl = configuration.transport as? CurlTransport { return curl.options.tls }
        #endif
        throw NetworkError(
            .invalidRequest,
            "A WebSocket opens with CurlTransport or URLSessionTransport only, not the client's transport."
        ).describing(request, redactor: configuration.redactor)
    }

    /// How many times ``cancelAll()`` has run.
    nonisolated var cancelAllGeneration: UInt64 { cancelAllCount.withLock { $0 } }

    /// The number of WebSockets the client keeps for its session, for tests.
    package nonisolated var openWebSocketCount: Int { openSockets.count }

    /// The number of requests in flight, for a network activity indicator.
    public nonisolated var activeRequestCount: Int { inFlight.count }

    /// The number of callers waiting for a transfer they share with identical requests, for
    /// tests.
    package nonisolated var sharedTransferWaiters: Int { shared.waiterCount }

    /// A stream of the number of requests in flight: the current number first, then every
    /// change. Each call returns a new stream; it ends when the consumer stops iterating.
    /// - Returns: The stream.
    public nonisolated func activityUpdates() -> AsyncStream<Int> {
        inFlight.activity.stream()
    }
}
