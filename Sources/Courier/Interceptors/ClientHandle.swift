/// A way for a layer's handler to send through the client it belongs to, with some layers
/// left out: the token fetch gets one that skips the token layer, the re-login handler one
/// that skips the re-login and token layers. So one client is enough; no second "plain"
/// client is needed for the calls that set up a session.
///
/// ```swift
/// .token(store: tokens) { refresh in
///     let answer = try await refresh.client.send(.refreshToken(refresh.previous?.refreshToken))
///     return Credential(accessToken: answer.token, refreshToken: answer.refreshToken)
/// }
/// ```
///
/// Every other layer still runs (common parameters, signing, logging, …), and the request
/// counts among the client's requests in flight (``NetworkClient/cancelAll()`` cancels it).
/// The handle a re-login handler gets sends nothing once ``NetworkClient/cancelAll()`` ran
/// after the request that asked for the login began (see ``ReLogin/client``).
public struct ClientHandle: Sendable {
    private let client: NetworkClient
    /// The layers a request sent through this handle skips, besides its endpoint's own.
    public let skippedLayers: Set<InterceptorLayer>
    /// ``NetworkClient/requestGeneration`` when the request the handle was made for began
    /// (what is sent through it is refused once it changed), or `nil` for no such limit.
    private let generation: UInt64?

    /// Creates a handle on `client` that skips `layers`, for testing a token fetch or a
    /// re-login handler of your own; layers get theirs from
    /// ``InterceptorContext/client(skipping:)``.
    /// - Parameters:
    ///   - client: The client to send through.
    ///   - layers: The layers to skip.
    public init(client: NetworkClient, skipping layers: Set<InterceptorLayer>) {
        self.init(client: client, skipping: layers, since: nil)
    }

    /// A handle whose requests are refused once ``NetworkClient/cancelAll()`` ran after
    /// `generation`, or never (`nil`).
    init(client: NetworkClient, skipping layers: Set<InterceptorLayer>, since generation: UInt64?) {
        self.client = client
        self.skippedLayers = layers
        self.generation = generation
    }

    /// Whether ``NetworkClient/cancelAll()`` ran since the request the handle was made for
    /// began, so that nothing is sent through it any more.
    var isPastCancelAll: Bool {
        generation.map { $0 != client.requestGeneration } ?? false
    }

    /// Whether requests sent through this handle and through `other` belong to the same time:
    /// no ``NetworkClient/cancelAll()`` ran between the requests they were made for.
    func isOfSameTime(as other: ClientHandle) -> Bool {
        guard let generation, let theirs = other.generation else { return true }
        return generation == theirs
    }

    /// Sends an endpoint through the client, skipping ``skippedLayers`` too.
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload.
    /// - Throws: ``NetworkError``, as ``NetworkClient/send(_:)`` does.
    public func send<Response>(_ endpoint: Endpoint<Response>) async throws(NetworkError) -> Response {
        try await reply(to: endpoint).value
    }

    /// Sends an endpoint through the client, skipping ``skippedLayers`` too, and returns the
    /// payload with the answer it came in (a token in a header, say).
    /// - Parameter endpoint: What to send and how to decode the answer.
    /// - Returns: The payload and its answer.
    /// - Throws: ``NetworkError``, as ``NetworkClient/send(_:)`` does.
    public func reply<Response>(to endpoint: Endpoint<Response>) async throws(NetworkError) -> Reply<Response> {
        var endpoint = endpoint
        endpoint.skippedLayers.formUnion(skippedLayers)
        return try await client.reply(to: endpoint, since: generation ?? client.requestGeneration)
    }
}
