import Foundation

/// Where a ``ResponseCache`` keeps its answers: ``MemoryCacheStore``, or a store of your own.
///
/// A store that fails to read is a miss and one that fails to write is skipped: the request
/// never fails because of its cache. Implementations must be safe to call from many tasks at
/// once.
public protocol CacheStore: Sendable {
    /// The answer stored under `key`, or `nil`.
    /// - Parameter key: The key.
    /// - Returns: The stored answer.
    /// - Throws: Any error; the cache treats it as a miss.
    func response(for key: CacheKey) async throws -> CachedResponse?

    /// Stores `response` under `key`, replacing what was there.
    /// - Parameters:
    ///   - response: The answer.
    ///   - key: The key.
    /// - Throws: Any error; the cache goes on without storing.
    func store(_ response: CachedResponse, for key: CacheKey) async throws

    /// Removes the answer stored under `key`, if any.
    /// - Parameter key: The key.
    /// - Throws: Any error.
    func removeResponse(for key: CacheKey) async throws

    /// Removes every answer stored for `key`'s resource: under every key whose first half (the
    /// user and the URL) is `key`'s (``CacheKey/resource``), whatever the request's other parts.
    /// The cache calls it when a request changed the resource (a successful `PUT`, `POST`,
    /// `PATCH` or `DELETE`).
    /// - Parameter key: A key of the resource.
    /// - Throws: Any error.
    func removeResponses(forResourceOf key: CacheKey) async throws

    /// Removes every stored answer.
    /// - Throws: Any error.
    func removeAll() async throws
}

/// The key of one stored answer: 64 lower-case hex characters, safe as a file name. The first
/// half (``resource``) is a digest of the signed-in user's ID and the URL with its query, the
/// second a digest of the whole request as its endpoint describes it: every answer for one
/// resource shares the first half. It is not a secret: whoever can guess a user's ID and a URL
/// can compute it.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The key in hex.
    public let rawValue: String

    /// A key of two halves, the first 16 bytes of each digest.
    package init(resource: [UInt8], variant: [UInt8]) {
        rawValue = resource.prefix(16).hexString + variant.prefix(16).hexString
    }

    /// The first half: the user and the URL, shared by every answer for one resource.
    public var resource: Substring { rawValue.prefix(32) }

    /// A key read back from its text (a file name, say).
    /// - Parameter rawValue: 64 lower-case hex characters; anything else gives `nil`.
    public init?(rawValue: String) {
        guard rawValue.utf8.count == 64, rawValue.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        self.rawValue = rawValue
    }

    /// The digest in hex.
    public var description: String { rawValue }
}

/// A stored answer: what the server sent, when it was stored, and the request headers it
/// varied on. It is `Codable`, for stores that write it somewhere.
public struct CachedResponse: Sendable, Hashable, Codable {
    /// The status code.
    public var status: Int
    /// The answer's header fields.
    public var headers: HTTPHeaders
    /// The body, decoded (no content encoding).
    public var body: Data
    /// When it was stored.
    public var storedAt: Date
    /// The request's values of the headers the answer's `Vary` names (lower-case names); a
    /// later request with other values is not answered from this entry.
    public var varyingHeaders: [String: String]

    /// The size the entry takes, roughly: its body and its headers.
    public var byteCount: Int {
        body.count + headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
            + varyingHeaders.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    /// An entry for an answer.
    /// - Parameters:
    ///   - response: The answer; its status, headers and body are kept.
    ///   - storedAt: When it is stored.
    ///   - varyingHeaders: The request's values of the headers the answer's `Vary` names.
    public init(_ response: HTTPResponse, storedAt: Date, varyingHeaders: [String: String] = [:]) {
        status = response.status
        headers = response.headers
        body = response.body
        self.storedAt = storedAt
        self.varyingHeaders = varyingHeaders
    }

    /// The answer as the transport gave it, for decoding.
    var response: HTTPResponse { HTTPResponse(status: status, headers: headers, body: body) }

    private enum CodingKeys: String, CodingKey {
        case status, headers, body, storedAt, varyingHeaders
    }

    /// Reads an entry; its headers are a list of `[name, value]` pairs.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the entry is not one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(Int.self, forKey: .status)
        var fields = HTTPHeaders()
        for pair in try container.decode([[String]].self, forKey: .headers) {
            guard pair.count == 2 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .headers, in: container, debugDescription: "A header is not a name and a value.")
            }
            fields.append(name: pair[0], value: pair[1])
        }
        headers = fields
        body = try container.decode(Data.self, forKey: .body)
        storedAt = try container.decode(Date.self, forKey: .storedAt)
        varyingHeaders = try container.decode([String: String].self, forKey: .varyingHeaders)
    }

    /// Writes the entry; its headers as a list of `[name, value]` pairs.
    /// - Parameter encoder: The encoder.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(headers.fields.map { [$0.name, $0.value] }, forKey: .headers)
        try container.encode(body, forKey: .body)
        try container.encode(storedAt, forKey: .storedAt)
        try container.encode(varyingHeaders, forKey: .varyingHeaders)
    }
}
