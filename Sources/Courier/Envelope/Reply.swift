import Foundation

/// A payload together with the answer it came in: the status, headers and timings, and the
/// envelope's code, message and other fields.
///
/// ```swift
/// let reply = try await client.reply(to: .orders(page: 1))
/// show(reply.value)
/// print(reply.response.status, reply.response.headers["X-Request-Id"] ?? "-", reply.message ?? "")
/// let total = try reply.field("meta.total", as: Int.self)
/// ```
///
/// ``message`` and ``code`` are read with the client's decoder (not an endpoint's own, from
/// `.envelope(using:)`), from a body of at most 8 MB, and only once for the answer: the client's
/// layers and checks read them from the same reading. ``field(_:as:)`` reads the body each time
/// it is asked: read what you need once.
public struct Reply<Value: Sendable>: Sendable {
    /// The payload, as ``NetworkClient/send(_:)`` returns it.
    public let value: Value
    /// The whole answer: status, headers, body, URL and ``HTTPResponse/timings``.
    public let response: HTTPResponse
    /// When the answer came from the client's ``ResponseCache``: when it was stored, and
    /// whether it is stale. `nil` for an answer from the network.
    public let cached: CacheInfo?
    /// The client's decoder; its `userInfo` holds the envelope format.
    private let decoder: JSONDecoder

    init(value: Value, response: HTTPResponse, decoder: JSONDecoder, cached: CacheInfo? = nil) {
        self.value = value
        self.response = response
        self.cached = cached
        self.decoder = decoder
    }

    /// The envelope's message, or `nil` when the body is not an envelope or has none.
    public var message: String? { response.envelope(decoder).message }

    /// The envelope's business code, or `nil` when the body is not an envelope or has none.
    public var code: BusinessCode? { response.envelope(decoder).code }

    /// Decodes one field of a JSON body with the client's decoder: a key beside the envelope's
    /// code and payload (`"total"`, `"serverTime"`), or a dotted path into nested objects
    /// (`"meta.page.next"`).
    /// - Parameters:
    ///   - key: The field's key or dotted path.
    ///   - type: The type to decode it as.
    /// - Returns: The value, or `nil` when it, or an object along the path, is missing or
    ///   `null`.
    /// - Throws: ``NetworkError/Code/decodingFailed`` when the body is not a JSON object or the
    ///   field has another type.
    public func field<Field: Decodable>(_ key: String, as type: Field.Type = Field.self) throws(NetworkError)
        -> Field?
    {
        let reader = decoder.copy(addingUserInfo: [.replyField: key])
        do {
            return try reader.decode(FieldReader<Field>.self, from: JSONBytes.forDecoding(response.body, with: reader))
                .value
        } catch {
            var failure = NetworkError(
                .decodingFailed,
                "The field \"\(key.prefix(100))\" could not be read as \(String(describing: Field.self)).",
                underlying: error)
            failure.body = response.body
            failure.codingPath = key
            throw failure
        }
    }
}

extension CodingUserInfoKey {
    /// Where ``Reply/field(_:as:)`` tells its reader which field to read.
    fileprivate static let replyField = CodingUserInfoKey(rawValue: "courier.replyField")!
}

/// Decodes a body's object and, from it, the field its decoder's `userInfo` names.
private struct FieldReader<Field: Decodable>: Decodable {
    let value: Field?

    init(from decoder: any Decoder) throws {
        let key = decoder.userInfo[.replyField] as? String ?? ""
        value = try decoder.container(keyedBy: EnvelopeKey.self).value(Field.self, at: key)
    }
}
