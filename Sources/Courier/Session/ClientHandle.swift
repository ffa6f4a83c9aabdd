/// A way for a layer to send through the client it belongs to, with some layers left out: the
/// session's refresh and silent login get one that skips the token and the silent login. So one
/// client is enough; no second "plain" client is needed for the calls that set up a session.
///
/// ```swift
/// let session = Session(refresh: { refresh in
///     let answer = try await refresh.client.send(.refreshToken(refresh.previous.refreshToken ?? ""))
///     return Credential(accessToken: answer.token, refreshToken: answer.refreshToken)
/// })
/// ```
///
/// Every other layer still runs (common parameters, signing, logging, …), and the request
/// counts among the client's requests in flight (``NetworkClient/cancelAll()`` cancels it,
/// except the session's refresh and login, which it leaves alone). A handle belongs to the
/// session's epoch it was made in: once someone logs in or out, what is sent through it is
/// refused with ``NetworkError/Code/cancelled``, so a refresh or a login under way cannot bring
/// back a session the app ended.
public struct ClientHandle: Sendable {
    private let client: NetworkClient
    /// The layers a request sent through this handle skips, besides its endpoint's own.
    public let skippedLayers: Set<InterceptorLayer>
    /// The epoch the handle belongs to.
    private let epoch: SessionEpoch
    /// Whether its requests are the session's own, which ``NetworkClient/cancelAll()`` leaves
    /// alone.
    private let isSessionWork: Bool

    /// Creates a handle on `client` that skips `layers`, in the session's epoch now, for testing
    /// a refresh or a login of your own; the session gets its own from the request it handles.
    /// - Parameters:
    ///   - client: The client to send through.
    ///   - layers: The layers to skip.
    public init(client: NetworkClient, skipping layers: Set<InterceptorLayer>) {
        self.init(client: client, skipping: layers, epoch: client.session.currentEpoch())
    }

    init(
        client: NetworkClient, skipping layers: Set<InterceptorLayer>, epoch: SessionEpoch, isSessionWork: Bool = false
    ) {
        self.client = client
        self.skippedLayers = layers
        self.epoch = epoch
        self.isSessionWork = isSessionWork
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
        return try await client.reply(to: endpoint, in: epoch, isSessionWork: isSessionWork)
    }
}
