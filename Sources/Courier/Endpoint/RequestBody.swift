import Foundation

/// The body an ``Endpoint`` sends.
///
/// ```swift
/// let create = Endpoint<Order>.post("orders", body: .json(newOrder))
/// let logIn = Endpoint<String>.post("login", body: .form(["user": name, "password": password]))
/// let avatar = Endpoint<EmptyResponse>.put("avatar", body: .data(png, contentType: "image/png"))
/// let media = Endpoint<EmptyResponse>.post("media", body: .multipart(form))
/// let backup = Endpoint<EmptyResponse>.put("backups/today", body: .file(archiveURL, contentType: "application/zip"))
/// ```
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// Parameters sent as `application/x-www-form-urlencoded`, encoded like a query.
    case form(Parameters)
    /// A value encoded as `application/json` with the client's `JSONEncoder`.
    case json(any Encodable & Sendable)
    /// Raw bytes with their media type, sent as they are.
    case data(Data, contentType: String)
    /// A file streamed from disk as the whole body, with its media type.
    case file(URL, contentType: String)
    /// A `multipart/form-data` body of text fields and files; see ``MultipartForm``.
    case multipart(MultipartForm)

    /// Encodes the body for the wire. Files are only checked here; the transport reads them.
    func httpBody(encoder: JSONEncoder) throws(NetworkError) -> HTTPBody {
        switch self {
        case .none: return .none
        case .form(let parameters): return .form(parameters)
        case .data(let data, let contentType): return .data(data, contentType: contentType)
        case .file(let url, let contentType):
            _ = try FileSource.length(of: url)
            return .file(url, contentType: contentType)
        case .multipart(let form):
            try form.validate()
            return .multipart(form)
        case .json(let value):
            do {
                return .json(try encoder.encode(value))
            } catch {
                throw NetworkError(
                    .invalidRequest, "The JSON body of type \(type(of: value)) could not be encoded.",
                    underlying: error)
            }
        }
    }
}
