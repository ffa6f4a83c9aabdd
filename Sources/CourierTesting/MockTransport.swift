import Courier
import Foundation

/// An in-memory `Transport` for unit tests: records every request and answers with canned
/// responses or a closure. Nothing touches the network.
///
/// ```swift
/// let transport = MockTransport { request in
///     .json(#"{"code":0,"msg":"ok","data":[{"id":1,"title":"Tea"}]}"#)
/// }
/// let client = NetworkClient(configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
/// let orders = try await client.send(.orders(page: 1))
/// #expect(transport.requests.first?.query["page"] == "1")
/// ```
///
/// Like any transport it answers each request as it comes, and the client does the rest: it never
/// hands it a request whose task is already cancelled (the caller gets
/// `NetworkError.Code.cancelled`) or one that cannot go on the wire
/// (`HTTPRequest.checkWireSafety()`: a header with CR LF, say, which throws
/// `NetworkError.Code.invalidRequest`); it follows a redirect the mock answers with, and holds
/// each request to its deadline (`NetworkError.Code.timedOut`).
///
/// `@unchecked Sendable`: the recorded requests and canned queue are guarded by `lock`.
public final class MockTransport: Transport, @unchecked Sendable {
    /// Produces the answer to a request.
    public typealias Responder = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private let lock = NSLock()
    private var recorded: [HTTPRequest] = []
    private var queue: [Result<HTTPResponse, NetworkError>]
    private let responder: Responder?
    private let delay: Duration

    /// Creates a transport that answers every request with a closure.
    /// - Parameter responder: Produces the answer; an error it throws is thrown by `send`.
    public init(_ responder: @escaping Responder) {
        self.responder = responder
        self.queue = []
        self.delay = .zero
    }

    /// Creates a transport that answers requests with canned results, one each, in order.
    /// A request beyond the last one fails with `NetworkError.Code.transport`.
    /// - Parameters:
    ///   - results: The answers or errors, in order.
    ///   - delay: How long each answer takes; cancelling the request meanwhile throws
    ///     `NetworkError.Code.cancelled` (its canned result is used up all the same).
    public init(results: [Result<HTTPResponse, NetworkError>], delay: Duration = .zero) {
        self.responder = nil
        self.queue = results
        self.delay = delay
    }

    /// Every request sent so far, in order.
    public var requests: [HTTPRequest] { lock.withLock { recorded } }

    /// Records the request and answers it.
    /// - Parameter request: The request.
    /// - Returns: The canned or computed answer.
    /// - Throws: `NetworkError`: the canned error, `NetworkError.Code.cancelled` when the task is
    ///   cancelled during a delay, or `NetworkError.Code.transport` when no answer is left.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let next: Result<HTTPResponse, NetworkError>? = lock.withLock {
            recorded.append(request)
            return responder == nil ? (queue.isEmpty ? nil : queue.removeFirst()) : nil
        }
        if let responder { return try await responder(request) }
        if delay > .zero {
            do { try await Task.sleep(for: delay) } catch {
                throw NetworkError(.cancelled, "The request was cancelled.")
            }
        }
        guard let next else { throw NetworkError(.transport, "MockTransport has no answer left.") }
        return try next.get()
    }
}

extension HTTPResponse {
    /// A JSON answer, for ``MockTransport``.
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - status: The status code.
    ///   - headers: More header fields.
    /// - Returns: The response, with `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var fields: HTTPHeaders = ["Content-Type": "application/json"]
        fields.merge(headers)
        return HTTPResponse(status: status, headers: fields, body: Data(text.utf8))
    }

    /// A text answer, for ``MockTransport``.
    /// - Parameters:
    ///   - text: The text, sent as UTF-8.
    ///   - status: The status code.
    ///   - contentType: The media type; `; charset=utf-8` is added unless it names a charset
    ///     (the body is UTF-8 either way).
    /// - Returns: The response.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain") -> HTTPResponse {
        let type = contentType.lowercased().contains("charset=") ? contentType : "\(contentType); charset=utf-8"
        return HTTPResponse(status: status, headers: ["Content-Type": type], body: Data(text.utf8))
    }

    /// An envelope answer, for ``MockTransport``: `{"code": …, "msg": …, "data": …}` under the
    /// keys `format` names.
    /// - Parameters:
    ///   - code: The business code.
    ///   - message: The message.
    ///   - data: The payload, encoded as JSON.
    ///   - format: The keys to use, as the client's `EnvelopeFormat` reads them (with its
    ///     success flag, when it has one, saying whether `code` is a success code).
    ///   - status: The status code.
    /// - Returns: The response.
    /// - Throws: `EncodingError` when `data` cannot be encoded as JSON.
    public static func envelope(
        code: BusinessCode = 0, message: String = "ok", data: some Encodable, format: EnvelopeFormat = .standard,
        status: Int = 200
    ) throws -> HTTPResponse {
        let body = try EnvelopeText.encode(code: code, message: message, data: data, format: format)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }
}
