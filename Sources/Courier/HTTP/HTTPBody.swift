import Foundation

/// The body of an ``HTTPRequest`` as it goes to the transport.
///
/// A form and a multipart form's text fields stay structured (so interceptors can add and sign
/// parameters); JSON and raw bodies are bytes, encoded once, so a signature over them matches
/// what is sent. Files are read only by the transport, through ``prepare()``.
public enum HTTPBody: Sendable, Hashable {
    /// No body.
    case none
    /// An `application/x-www-form-urlencoded` body, encoded with ``PercentEncoding``.
    case form(Parameters)
    /// An `application/json` body.
    case json(Data)
    /// Raw bytes with their media type.
    case data(Data, contentType: String)
    /// A file streamed from disk with its media type.
    case file(URL, contentType: String)
    /// A `multipart/form-data` body: text fields and files.
    case multipart(MultipartForm)

    /// The media type sent as `Content-Type`, or `nil` for no body. A multipart body's type
    /// gets its boundary only from ``prepare()``.
    public var contentType: String? {
        switch self {
        case .none: nil
        case .form: "application/x-www-form-urlencoded"
        case .json: "application/json"
        case .data(_, let contentType), .file(_, let contentType): contentType
        case .multipart: "multipart/form-data"
        }
    }

    /// The bytes that go on the wire for an in-memory body; `nil` for no body, a file or a
    /// multipart form (see ``prepare()``).
    public var encoded: Data? {
        switch self {
        case .none, .file, .multipart: nil
        case .form(let parameters): Data(parameters.encoded.utf8)
        case .json(let data), .data(let data, _): data
        }
    }
}
