import Foundation

/// The request as its endpoint describes it, reduced to a digest: what the cache stores answers
/// under and what identical requests in flight are matched by.
enum RequestDigest {
    /// The parts that tell two requests apart (method, URL, query, the body's type and a digest
    /// of it), or `nil` for a request that is never shared or stored: a download, or a file or
    /// multipart body.
    static func parts(of request: HTTPRequest) -> [String]? {
        guard request.download == nil else { return nil }
        let body: Data
        switch request.body {
        case .none: body = Data()
        case .file, .multipart: return nil
        case .form, .json, .data: body = request.body.encoded ?? Data()
        }
        return [
            request.method.rawValue, request.url.absoluteString, request.query.encoded,
            request.body.contentType ?? "", body.isEmpty ? emptyBodyDigest : Hashing.sha256(body).hexString,
        ]
    }

    /// The SHA-256 of no bytes, the digest of every request without a body.
    private static let emptyBodyDigest = Hashing.sha256(Data()).hexString

    /// The SHA-256 of `parts` under a name for what they are for, each part written after its
    /// length, so that no two lists of parts write the same text.
    static func digest(_ purpose: String, _ parts: [String]) -> [UInt8] {
        var text = purpose
        for part in parts { text += "\n\(part.utf8.count):" + part }
        return Hashing.sha256(Data(text.utf8))
    }

    /// The resource of a request for the cache: the user it belongs to and its URL with its
    /// query (what a `PUT` to it changes, whatever the method and body of a later read).
    static func resource(owner: String, of request: HTTPRequest) -> [UInt8] {
        digest("courier-resource-1", [owner, request.url.absoluteString, request.query.encoded])
    }
}
