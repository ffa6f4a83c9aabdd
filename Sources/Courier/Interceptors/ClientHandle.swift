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
public struct ClientHandle: Sendable {
    private let client: NetworkClient
    /// The layers a request sent through this handle skips, besides its endpoint's own.
    public let skippedLayers: Set<InterceptorLayer>

    /// Creates a handle on `client` that skips `layers`, for testing a token fetch or a
    /// re-login handler of your own; layers get theirs from
    /// ``InterceptorContext/client(skipping:)``.
    /// - Parameters:
    ///   - client: The client to send through.
    ///   - layers: The layers to skip.
    public init(client: NetworkClient, skipping layers: Set<InterceptorLayer>) {
        self.client = client
        self.skippedLayers = layers
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
        return try await client.reply(to: endpoint)
    }
}
