import Foundation

/// The text a request signature is computed over. The format is part of Courier's contract with
/// backends; the "Signing requests" article spells it out with worked examples.
///
/// ```
/// METHOD \n PATH \n SORTED-PARAMETERS \n TIMESTAMP \n NONCE \n BODY-SHA256
/// ```
///
/// - `PATH`: the URL path exactly as sent (percent-encoded, without `.` and `..` segments), `/`
///   when empty.
/// - `SORTED-PARAMETERS`: every query, form and multipart text parameter except the signature itself, each as
///   `name=value` percent-encoded by ``PercentEncoding`` (so exactly as on the wire), sorted by
///   their bytes and joined with `&`.
/// - `TIMESTAMP`: Unix time in whole seconds; `NONCE`: a random value used once.
/// - `BODY-SHA256`: lower-case hex SHA-256 of a JSON or raw body, or of no bytes for no body,
///   a form or a multipart form (whose text fields are among the parameters; its files are not
///   signed), or a file body (not read to sign it).
public struct CanonicalRequest: Sendable, Hashable {
    /// The method token.
    public let method: String
    /// The percent-encoded path.
    public let path: String
    /// The sorted, encoded parameters joined with `&`.
    public let sortedParameters: String
    /// The timestamp text.
    public let timestamp: String
    /// The nonce.
    public let nonce: String
    /// Lower-case hex SHA-256 of the body bytes.
    public let bodyHash: String

    /// Builds the canonical form of a request.
    /// - Parameters:
    ///   - request: The request, with every parameter in place.
    ///   - excluding: The name of the signature parameter, left out of the parameters.
    ///   - timestamp: The timestamp text.
    ///   - nonce: The nonce.
    public init(_ request: HTTPRequest, excluding: String? = nil, timestamp: String, nonce: String) {
        method = request.method.rawValue
        path = request.wirePath
        var items = request.query.items
        var body = Data()
        switch request.body {
        case .form(let form): items.append(contentsOf: form.items)
        case .multipart(let form): items.append(contentsOf: form.fields.items)
        case .json(let data), .data(let data, _): body = data
        case .none, .file: break
        }
        sortedParameters =
            items
            .filter { $0.name != excluding }
            .map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .joined(separator: "&")
        self.timestamp = timestamp
        self.nonce = nonce
        bodyHash = SHA256.hash(body).hexString
    }

    /// The six lines joined with `\n`: the text HMAC-SHA256 signs.
    public var string: String {
        [method, path, sortedParameters, timestamp, nonce, bodyHash].joined(separator: "\n")
    }
}
