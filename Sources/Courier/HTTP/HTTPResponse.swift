import Foundation

/// An answer as the transport received it: status, headers and the whole body.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int {
        get { fields.value.status }
        _modify { yield &fields.value.status }
    }
    /// The header fields.
    public var headers: HTTPHeaders {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body bytes (empty when there was none, or when it went to ``bodyFile``).
    public var body: Data {
        get { fields.value.body }
        _modify {
            // A new body is read for itself: what was read is the old body's.
            defer { fields.value.reading = Locked(nil) }
            yield &fields.value.body
        }
    }
    /// The file the body was written to, when the request asked for a download and the answer
    /// was a success.
    public var bodyFile: URL? {
        get { fields.value.bodyFile }
        _modify { yield &fields.value.bodyFile }
    }
    /// The URL that answered, after any redirects.
    public var url: URL? {
        get { fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// How long the phases of the exchange took, when the transport measures them.
    public var timings: TransferTimings? {
        get { fields.value.timings }
        _modify { yield &fields.value.timings }
    }
    /// The HTTP version of the answer (`1.1`, `2`), when the transport reports it.
    public var httpVersion: String? {
        get { fields.value.httpVersion }
        _modify { yield &fields.value.httpVersion }
    }
    /// The shared transfer the answer came from, when identical requests shared it: their
    /// callers store it in the cache once.
    var sharedTransfer: SharedTransferMark? {
        get { fields.value.sharedTransfer }
        _modify { yield &fields.value.sharedTransfer }
    }
    /// What the transport measured beyond ``timings``, for a request's timeline.
    package var exchangeFacts: ExchangeFacts? {
        get { fields.value.exchangeFacts }
        _modify { yield &fields.value.exchangeFacts }
    }
    /// The body still arriving, for a request that asked for a streamed answer
    /// (``HTTPRequest/streaming``); ``body`` is empty then.
    var streamedBody: ResponseBodyStream.Reading? {
        get { fields.value.streamedBody }
        _modify { yield &fields.value.streamedBody }
    }

    /// The stored properties, out of line (see ``CopyOnWrite``).
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        var bodyFile: URL? = nil
        var url: URL? = nil
        var timings: TransferTimings? = nil
        var httpVersion: String? = nil
        var sharedTransfer: SharedTransferMark? = nil
        var exchangeFacts: ExchangeFacts? = nil
        var streamedBody: ResponseBodyStream.Reading? = nil
        /// What the client read of the body (see ``BodyReading``).
        var reading = Locked<BodyReading?>(nil)
    }

    /// What the client read of the body: shared by the copies of a response until one of them
    /// changes its body.
    var bodyReading: Locked<BodyReading?> { fields.value.reading }

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
    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
        fields = CopyOnWrite(Fields(status: status, headers: headers, body: body, url: url))
    }

    /// The media type of `Content-Type`, lower-cased, without parameters such as `charset`.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1).first ?? Substring(value).utf8[...]
        let trimmed = type.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        return String(decoding: trimmed, as: UTF8.self).lowercased()
    }
}

extension HTTPResponse: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self, hiding: ["reading"]) }
}
