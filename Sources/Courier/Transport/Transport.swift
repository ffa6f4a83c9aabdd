/// The seam between Courier's request pipeline and the wire: sends one request and hands back
/// its answer.
///
/// ``CurlTransport`` is the default on Linux and ``URLSessionTransport`` on Apple platforms;
/// `CourierTesting` has an in-memory `MockTransport`. An app can write its own.
///
/// ## What the client does around every transport
///
/// Each request reaches the transport once the layers are done with it, and the client keeps
/// the rest of the contract, the same way for every transport:
/// - a request whose task is already cancelled never reaches it;
/// - nor does one that cannot go on the wire (``HTTPRequest/checkWireSafety()``: a header with
///   CR LF, a method that is not a token, a URL that is not `http` or `https`), which fails with
///   ``NetworkError/Code/invalidRequest`` (Courier's own transports make this check themselves);
/// - a redirect answer is followed by Courier's redirect rules (`http` and `https` only,
///   credentials never to another origin, a body sent again on the same origin only), each
///   redirected request sent through the transport as a request of its own;
/// - the first request's ``HTTPRequest/timeout`` is an overall deadline for the answer, redirects
///   included: a redirected request's timeout is the time left, and at the deadline the client
///   cancels the transport's work and throws ``NetworkError/Code/timedOut``;
/// - a body past ``HTTPRequest/maximumResponseBodySize`` fails with
///   ``NetworkError/Code/responseTooLarge``;
/// - an answer without ``HTTPResponse/url`` gets the request's URL.
///
/// ## Write your own transport
///
/// A transport sends exactly the request it is given and returns the answer, whatever its
/// status: a 302 is returned as it is, for the client to follow. It must:
/// - stop the transfer when its task is cancelled, throwing ``NetworkError/Code/cancelled`` (until
///   it stops, its caller waits);
/// - send the body ``HTTPBody/prepare()`` makes (call ``PreparedBody/discard()`` once the
///   transfer ends), or ``HTTPBody/encoded`` for a body in memory, with ``HTTPBody/contentType``
///   unless the request sets its own `Content-Type`;
/// - throw only ``NetworkError`` (``NetworkError/Code/transport`` for connection failures); any
///   other error reaches the caller as ``NetworkError/Code/transport``.
///
/// ```swift
/// struct LoopbackOnly: Transport {
///     let inner: any Transport
///     func send(_ request: HTTPRequest) async throws -> HTTPResponse {
///         guard request.url.host == "127.0.0.1" else {
///             throw NetworkError(.invalidRequest, "This build talks to 127.0.0.1 only.")
///         }
///         return try await inner.send(request)
///     }
/// }
/// ```
///
/// Courier's own transports stop reading a body at its limit, keep the deadline themselves, and
/// check each request for the wire themselves (so a caller that uses them without a client is
/// checked too); for another transport the client checks a body once it is whole.
public protocol Transport: Sendable {
    /// Sends one request and returns its answer.
    /// - Parameter request: The request, with parameters still structured.
    /// - Returns: The answer, with any status (a redirect too).
    /// - Throws: ``NetworkError`` when no complete answer arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
