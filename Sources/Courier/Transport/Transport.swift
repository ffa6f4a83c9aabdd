/// The seam between Courier's request pipeline and the wire.
///
/// A transport sends one fully built ``HTTPRequest`` and returns the whole answer, whatever its
/// status. It must:
/// - never send a request whose Swift task is already cancelled, and stop the transfer when
///   the task is cancelled later, throwing ``NetworkError/Code/cancelled``;
/// - treat ``HTTPRequest/timeout`` as an overall deadline for the whole answer (not an idle
///   timeout) and throw ``NetworkError/Code/timedOut`` when it passes;
/// - throw only ``NetworkError`` (``NetworkError/Code/transport`` for connection failures).
///
/// ``URLSessionTransport`` is the default; `CourierTesting` has an in-memory `MockTransport`.
public protocol Transport: Sendable {
    /// Sends a request and returns the answer.
    /// - Parameter request: The request, with parameters still structured.
    /// - Returns: The answer, with any status.
    /// - Throws: ``NetworkError`` when no complete answer arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
