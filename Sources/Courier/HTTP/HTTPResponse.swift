import Foundation

/// An answer as the transport received it: status, headers and the whole body.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body bytes (empty when there was none, or when it went to ``bodyFile``).
    public var body: Data
    /// The file the body was written to, when the request asked for a download and the answer
    /// was a success.
    public var bodyFile: URL?
    /// The URL that answered, after any redirects.
    public var url: URL?
    /// How long the phases of the exchange took, when the transport measures them.
    public var timings: TransferTimings?
    /// The HTTP version of the answer (`1.1`, `2`), when the transport reports it.
    public var httpVersion: String?
    /// The shared transfer the answer came from, when identical requests shared it: their
    /// callers store it in the cache once.
    var sharedTransfer: SharedTransferMark?
    /// What the transport measured beyond ``timings``, for a request's timeline; kept behind
    /// a reference so that an answer without it stays small to copy.
    package var exchangeFacts: ExchangeFacts? {
        get { measured?.facts }
        set { measured = newValue.map(MeasuredFacts.init) }
    }
    private var measured: MeasuredFacts?
    /// The body still arriving, for a request that asked for a streamed answer
    /// (``HTTPRequest/streaming``); ``body`` is empty then.
    var streamedBody: ResponseBodyStream.Reading?

    /// The most bytes of header lines a transport accepts for one answer (interim `1xx`
    /// answers included): 256 KiB. A larger header block fails with
    /// ``NetworkError/Code/responseTooLarge``.
    public static let maximumHeaderSize = 256 * 1024

    /// Creates a response.
    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - headers: The header fields.
    ///   - body: The body bytes.
    ///   - url: The URL that answered.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The media type of `Content-Type`, lower-cased, without parameters such as `charset`.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1).first ?? Substring(value).utf8[...]
        let trimmed = type.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        return String(decoding: trimmed, as: UTF8.self).lowercased()
    }
}

/// ``HTTPResponse/exchangeFacts`` behind one reference.
private final class MeasuredFacts: Sendable {
    let facts: ExchangeFacts
    init(_ facts: ExchangeFacts) { self.facts = facts }
}
