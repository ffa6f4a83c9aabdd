import Foundation

/// The body of an ``HTTPRequest`` as it goes to the transport.
///
/// A form stays structured (so interceptors can add and sign parameters); JSON and raw
/// bodies are bytes, encoded once, so a signature over them matches what is sent.
public enum HTTPBody: Sendable, Hashable {
    /// No body.
    case none
    /// An `application/x-www-form-urlencoded` body, encoded with ``PercentEncoding``.
    case form(Parameters)
    /// An `application/json` body.
    case json(Data)
    /// Raw bytes with their media type.
    case data(Data, contentType: String)

    /// The media type sent as `Content-Type`, or `nil` for no body.
    public var contentType: String? {
        switch self {
        case .none: nil
        case .form: "application/x-www-form-urlencoded"
        case .json: "application/json"
        case .data(_, let contentType): contentType
        }
    }

    /// The bytes that go on the wire, or `nil` for no body.
    public var encoded: Data? {
        switch self {
        case .none: nil
        case .form(let parameters): Data(parameters.encoded.utf8)
        case .json(let data), .data(let data, _): data
        }
    }
}
