import Courier
import Foundation

extension LoopbackServer {
    /// A request as the server received it.
    public struct Request: Sendable {
        /// The method.
        public var method: HTTPMethod
        /// The request target exactly as sent: percent-encoded path and query.
        public var target: String
        /// The header fields in the order sent.
        public var headers: HTTPHeaders
        /// The body, de-chunked when it was sent chunked.
        public var body: Data
        /// Whether the body arrived with `Transfer-Encoding: chunked`.
        public var wasChunked: Bool

        /// A request as if received (for the fuzz targets, which read bodies without a server).
        package init(method: HTTPMethod, target: String, headers: HTTPHeaders, body: Data, wasChunked: Bool = false) {
            self.method = method
            self.target = target
            self.headers = headers
            self.body = body
            self.wasChunked = wasChunked
        }

        /// The path part of ``target``, still percent-encoded.
        public var path: String {
            String(target[..<(target.firstIndex(of: "?") ?? target.endIndex)])
        }

        /// The query part of ``target`` without `?`, still percent-encoded (`""` when none).
        public var rawQuery: String {
            guard let mark = target.firstIndex(of: "?") else { return "" }
            return String(target[target.index(after: mark)...])
        }

        /// The query, decoded.
        public var query: Parameters { Parameters.decoding(Substring(rawQuery)) }

        /// The body read as a form (`a=1&b=2`), decoded.
        public var form: Parameters { Parameters.decoding(Substring(decoding: body, as: UTF8.self)) }

        /// Decodes the body as JSON.
        /// - Parameter type: The type to decode.
        /// - Returns: The decoded value.
        /// - Throws: A `DecodingError` when the body does not match.
        public func json<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: body)
        }
    }

    /// An answer a route gives, with optional scripted faults.
    ///
    /// ```swift
    /// server.route("orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
    /// server.route("slow") { _ in .json(#"{"code":0}"#).delayed(by: .seconds(5)) }
    /// ```
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields. `Content-Length` and `Connection` are added by the server.
        public var headers: HTTPHeaders
        /// The body.
        public var body: Data
        /// How long the server waits before answering, watching for the client to hang up.
        public var delay: Duration
        /// A scripted fault, or `nil` to answer normally.
        public var fault: Fault?
        /// Writes the body as it goes (see ``stream(status:headers:_:)``); `body` is not sent then.
        var streamBody: (@Sendable (StreamWriter) async -> Void)?
        /// Takes the connection over as a WebSocket (see ``webSocket(subprotocol:headers:_:)``).
        var webSocket: WebSocketRoute?

        /// Creates an answer.
        /// - Parameters:
        ///   - status: The status code.
        ///   - headers: Header fields.
        ///   - body: The body.
        public init(status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = .zero
            self.fault = nil
        }

        /// A JSON answer from text.
        /// - Parameters:
        ///   - text: The JSON text.
        ///   - status: The status code.
        /// - Returns: The answer, with `Content-Type: application/json`.
        public static func json(_ text: String, status: Int = 200) -> Response {
            Response(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
        }

        /// A plain-text answer.
        /// - Parameters:
        ///   - text: The text.
        ///   - status: The status code.
        ///   - contentType: The media type.
        /// - Returns: The answer.
        public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain") -> Response {
            Response(status: status, headers: ["Content-Type": contentType], body: Data(text.utf8))
        }

        /// An envelope answer, `{"code": …, "msg": …, "data": …}` under the keys `format` names.
        /// A payload that cannot be encoded as JSON gives a `500` that says so.
        /// - Parameters:
        ///   - code: The business code.
        ///   - message: The message.
        ///   - data: The payload, encoded as JSON.
        ///   - format: The keys to use, as the client's `EnvelopeFormat` reads them (with its
        ///     success flag, when it has one, saying whether `code` is a success code).
        /// - Returns: The answer.
        public static func envelope(
            code: BusinessCode = 0, message: String = "ok", data: some Encodable, format: EnvelopeFormat = .standard
        ) -> Response {
            do {
                let body = try EnvelopeText.encode(code: code, message: message, data: data, format: format)
                return Response(status: 200, headers: ["Content-Type": "application/json"], body: body)
            } catch {
                return .text("The envelope's payload could not be encoded: \(error)", status: 500)
            }
        }

        /// A copy that is sent after a delay.
        /// - Parameter delay: How long to wait before answering.
        /// - Returns: The changed answer.
        public func delayed(by delay: Duration) -> Response {
            var copy = self
            copy.delay = delay
            return copy
        }

        /// A copy with a scripted fault.
        /// - Parameter fault: The fault.
        /// - Returns: The changed answer.
        public func with(_ fault: Fault) -> Response {
            var copy = self
            copy.fault = fault
            return copy
        }
    }

    /// A misbehaviour the server can act out.
    public enum Fault: Sendable, Hashable {
        /// Sends the headers, then the body `bytes` at a time with a pause between pieces.
        case drip(bytes: Int, every: Duration)
        /// Sends the headers (announcing the whole body), `bytes` of the body, then hangs up.
        case closeMidBody(afterBytes: Int)
        /// Hangs up without answering.
        case closeBeforeResponding
    }

    /// Something that happened on the server, in order.
    public enum Event: Sendable, Hashable {
        /// A client connected.
        case connected
        /// A whole request arrived, with its method and target.
        case received(method: HTTPMethod, target: String)
        /// The answer to a request was sent in full.
        case answered(target: String)
        /// The client hung up before the answer to a request was complete.
        case clientClosedEarly(target: String)
        /// A request could not be read (malformed, too large, ambiguous framing): it was
        /// answered with this status and the connection closed.
        case rejected(status: Int)
    }
}
