import Foundation

/// The body an ``Endpoint`` sends.
///
/// ```swift
/// .post("orders", body: .json(newOrder))
/// .post("login", body: .form(["user": name, "password": password]))
/// .put("avatar", body: .data(png, contentType: "image/png"))
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

    /// Encodes the body for the wire.
    func httpBody(encoder: JSONEncoder) throws(NetworkError) -> HTTPBody {
        switch self {
        case .none: return .none
        case .form(let parameters): return .form(parameters)
        case .data(let data, let contentType): return .data(data, contentType: contentType)
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
