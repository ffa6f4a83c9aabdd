import Foundation

/// How an ``Endpoint`` turns an answer into its `Response`.
///
/// - ``envelope``: the body is a ``BaseModel`` envelope; a failing code throws
///   ``NetworkError/Code/business``; the payload is returned. The default.
/// - ``json``: the body is the `Response` itself, as plain JSON.
/// - ``empty``: the body is ignored (`204`, `HEAD`, fire-and-forget calls).
/// - ``data``: the body bytes, unchanged (images, files).
/// - ``text``: the body as a `String`, in the answer's charset.
/// - ``response``: the whole ``HTTPResponse`` (status, headers, body).
///
/// Only ``envelope`` and ``json`` check the answer's `Content-Type` against the client's
/// acceptable content types.
public struct ResponseDecoding<Response: Sendable>: Sendable {
    /// Whether the answer's media type is checked (JSON bodies only).
    var checksContentType: Bool { fields.value.checksContentType }
    package var decode: @Sendable (HTTPResponse, DecodingContext) throws(NetworkError) -> Response {
        fields.value.decode
    }
    /// For an envelope decoded with the client's decoder: decodes an answer's envelope ahead of
    /// ``decode``, when a layer asks for its code, so the body is read once for both (see
    /// ``HTTPResponse/decodeAhead(_:by:decode:)``).
    package var decodeAhead: (@Sendable (HTTPResponse, JSONDecoder) -> Void)? {
        get { fields.value.decodeAhead }
        set { fields.value.decodeAhead = newValue }
    }

    /// The stored properties, out of line (see ``CopyOnWrite``): copies of an endpoint's
    /// decoding sit in the frames that a request waiting in flight keeps.
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        let checksContentType: Bool
        let decode: @Sendable (HTTPResponse, DecodingContext) throws(NetworkError) -> Response
        var decodeAhead: (@Sendable (HTTPResponse, JSONDecoder) -> Void)? = nil
    }

    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    init(
        checksContentType: Bool,
        decode: @escaping @Sendable (HTTPResponse, DecodingContext) throws(NetworkError) -> Response
    ) {
        fields = CopyOnWrite(Fields(checksContentType: checksContentType, decode: decode))
    }
}

extension ResponseDecoding: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}

/// What decoding needs from the client.
package struct DecodingContext: Sendable {
    /// Decodes JSON; its `userInfo` holds the envelope format.
    let decoder: JSONDecoder
    let envelope: EnvelopeFormat

    package init(decoder: JSONDecoder, envelope: EnvelopeFormat) {
        self.decoder = decoder
        self.envelope = envelope
    }
}

extension ResponseDecoding {
    /// A decoding of your own. `decode` gets the whole answer, its body as it came, and the
    /// client's JSON decoder; an error it throws that is not a ``NetworkError`` becomes
    /// ``NetworkError/Code/decodingFailed``, with the body attached. (With `allowsJSON5` on,
    /// Foundation's reader can end the process on a body that is not UTF-8, which Courier's
    /// own ``envelope`` and ``json`` guard against: check the bytes first when you use one.)
    ///
    /// ```swift
    /// extension ResponseDecoding where Response == [String] {
    ///     static var lines: Self {
    ///         Self { response, _ in String(decoding: response.body, as: UTF8.self).split(separator: "\n").map(String.init) }
    ///     }
    /// }
    /// ```
    /// - Parameters:
    ///   - checkingContentType: Whether the answer's `Content-Type` must be one of the client's
    ///     acceptable content types (as for ``envelope`` and ``json``).
    ///   - decode: Turns the answer into the response.
    public init(
        checkingContentType: Bool = false,
        _ decode: @escaping @Sendable (_ response: HTTPResponse, _ decoder: JSONDecoder) throws -> Response
    ) {
        self.init(checksContentType: checkingContentType) { (response, context) throws(NetworkError) in
            do {
                return try decode(response, context.decoder)
            } catch let error as NetworkError {
                throw error
            } catch {
                var failure = NetworkError(
                    .decodingFailed, "The answer could not be decoded as \(String(describing: Response.self)).",
                    underlying: error)
                failure.body = response.body
                throw failure
            }
        }
    }
}

extension ResponseDecoding where Response: Decodable {
    /// The body is an envelope; its payload is returned, and a failing code throws
    /// ``NetworkError/Code/business`` with the code and message.
    public static var envelope: Self {
        var decoding = envelope { $0.decoder }
        decoding.decodeAhead = { response, decoder in response.decodeAhead(BaseModel<Response>.self, by: decoder) }
        return decoding
    }

    /// The body is an envelope, decoded with `decoder` instead of the client's (its settings
    /// as they are now; the client's envelope format still applies).
    /// - Parameter decoder: The decoder, for example one with another date strategy.
    /// - Returns: The decoding.
    public static func envelope(using decoder: JSONDecoder) -> Self {
        let snapshot = decoder.copy(addingUserInfo: [:])
        return envelope { snapshot.copy(addingUserInfo: [.envelopeFormat: $0.envelope]) }
    }

    /// The body is the `Response` as plain JSON, without an envelope.
    public static var json: Self { json { $0.decoder } }

    /// The body is the `Response` as plain JSON, decoded with `decoder` instead of the
    /// client's (its settings as they are now, with the client's envelope format for any
    /// ``BaseModel`` inside).
    /// - Parameter decoder: The decoder.
    /// - Returns: The decoding.
    public static func json(using decoder: JSONDecoder) -> Self {
        let snapshot = decoder.copy(addingUserInfo: [:])
        return json { snapshot.copy(addingUserInfo: [.envelopeFormat: $0.envelope]) }
    }

    private static func envelope(decoder: @escaping @Sendable (DecodingContext) -> JSONDecoder) -> Self {
        Self(checksContentType: true) { (response, context) throws(NetworkError) in
            if response.body.isEmpty, let empty = emptyValue(Response.self) { return empty }
            let envelope: BaseModel<Response>
            do throws(NetworkError) {
                let decoder = decoder(context)
                envelope = try response.envelope(BaseModel<Response>.self, by: decoder)
            } catch {
                throw Self.explainingMissingEnvelope(error, format: context.envelope)
            }
            guard envelope.isSuccess else {
                var error = NetworkError(.business, envelope.message ?? context.envelope.defaultMessage)
                error.businessCode = envelope.code
                error.businessMessage = envelope.message ?? context.envelope.defaultMessage
                error.status = response.status
                error.body = response.body
                throw error
            }
            if let data = envelope.data { return data }
            if let empty = emptyValue(Response.self) { return empty }
            var error = NetworkError(
                .decodingFailed,
                "The envelope has no \"\(context.envelope.dataKey)\" for \(String(describing: Response.self)).")
            error.codingPath = context.envelope.dataKey
            error.body = response.body
            throw error
        }
    }

    /// `error`, said plainly when the answer has no envelope at all (a JSON array or a value
    /// at the top, or an object without the envelope's code): the usual mistake of an endpoint
    /// that should decode plain JSON.
    private static func explainingMissingEnvelope(_ error: NetworkError, format: EnvelopeFormat) -> NetworkError {
        guard let underlying = error.underlying as? DecodingError else { return error }
        var error = error
        switch underlying {
        case .typeMismatch(_, let context) where context.codingPath.isEmpty:
            error.message =
                "This answer has no envelope: its top level is not an object. If the endpoint answers plain JSON, "
                + "decode it with `decoding: .json`."
        case .keyNotFound(let key, let context)
        where context.codingPath.isEmpty
            && [format.successKey ?? format.codeKey].map({ EnvelopeFormat.path($0).first }).contains(key.stringValue):
            let wanted = format.successKey ?? format.codeKey
            error.message =
                "This answer has no envelope: it has no \"\(wanted)\". If the endpoint answers plain JSON, "
                + "decode it with `decoding: .json`."
        default:
            return error
        }
        return error
    }

    private static func json(decoder: @escaping @Sendable (DecodingContext) -> JSONDecoder) -> Self {
        Self(checksContentType: true) { (response, context) throws(NetworkError) in
            if response.body.isEmpty, let empty = emptyValue(Response.self) { return empty }
            return try decodeJSON(Response.self, from: response.body, decoder(context))
        }
    }
}

extension ResponseDecoding where Response == EmptyResponse {
    /// The body is ignored.
    public static var empty: Self {
        Self(checksContentType: false) { _, _ in EmptyResponse() }
    }
}

extension ResponseDecoding where Response == Data {
    /// The body bytes, unchanged.
    public static var data: Self {
        Self(checksContentType: false) { response, _ in response.body }
    }
}

extension ResponseDecoding where Response == String {
    /// The body as text, in the `charset` its `Content-Type` names (UTF-8 when it names none):
    /// `utf-8`, `us-ascii`, `iso-8859-1`, `windows-1252`, `utf-16` (big-endian unless a byte
    /// order mark says otherwise), `utf-16le` or `utf-16be`. A byte order mark is dropped.
    /// Bytes that are not text in that charset, or another charset, throw
    /// ``NetworkError/Code/decodingFailed``.
    public static var text: Self {
        Self(checksContentType: false) { (response, _) throws(NetworkError) in
            let name = TextCharset.name(inContentType: response.headers["Content-Type"]) ?? "utf-8"
            let shown = "\"\(name.prefix(40))\""
            guard let encoding = TextCharset.encoding(named: name) else {
                var error = NetworkError(.decodingFailed, "The answer's charset \(shown) is not one Courier reads.")
                error.body = response.body
                throw error
            }
            guard let text = TextCharset.decode(response.body, as: encoding) else {
                var error = NetworkError(.decodingFailed, "The body is not \(shown) text.")
                error.body = response.body
                throw error
            }
            return text
        }
    }
}

extension ResponseDecoding where Response == HTTPResponse {
    /// The whole answer: status, headers and body.
    public static var response: Self {
        Self(checksContentType: false) { response, _ in response }
    }
}

/// The value of a type that stands for "no payload": ``EmptyResponse`` or any `Optional`.
private func emptyValue<T>(_ type: T.Type) -> T? {
    if let empty = EmptyResponse() as? T { return empty }
    if let optional = T.self as? any ExpressibleByNilLiteral.Type {
        return optional.init(nilLiteral: ()) as? T
    }
    return nil
}

/// The bytes a JSON decoder is given, the same for the caller's decoding and for the business
/// code the token and re-login layers read.
enum JSONBytes {
    /// `body` as it is, except that a JSON5 decoder gets bytes that are not UTF-8 replaced:
    /// Foundation's JSON5 reader ends the process on them in a key instead of throwing (found
    /// by the fuzz target). Checked without a copy; copied only when some are found.
    static func forDecoding(_ body: Data, with decoder: JSONDecoder) -> Data {
        guard decoder.allowsJSON5, !isUTF8(body) else { return body }
        return Data(String(decoding: body, as: UTF8.self).utf8)
    }

    static func isUTF8(_ bytes: Data) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

/// Decodes JSON, turning a `DecodingError` into ``NetworkError/Code/decodingFailed`` that names
/// the type, the coding path and a snippet of the body.
func decodeJSON<T: Decodable>(_ type: T.Type, from body: Data, _ decoder: JSONDecoder)
    throws(NetworkError) -> T
{
    do {
        return try decoder.decode(type, from: JSONBytes.forDecoding(body, with: decoder))
    } catch {
        throw decodingFailure(error, decoding: T.self, body: body)
    }
}

/// The ``NetworkError/Code/decodingFailed`` for `error`, thrown decoding `body` as `type`.
func decodingFailure<T>(_ error: any Error, decoding type: T.Type, body: Data) -> NetworkError {
    let typeName = String(describing: T.self)
    var failure = NetworkError(.decodingFailed, "The body could not be decoded as \(typeName).", underlying: error)
    failure.body = body
    if let decodingError = error as? DecodingError {
        let (path, detail) = describe(decodingError)
        failure.codingPath = path
        failure.message =
            "The body could not be decoded as \(typeName) at \(path.isEmpty ? "the top level" : path): \(detail)"
    }
    return failure
}

/// The coding path (`data.items[2].title`) and a short reason for a `DecodingError`.
private func describe(_ error: DecodingError) -> (path: String, detail: String) {
    func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
    switch error {
    case .keyNotFound(let key, let context):
        return (render(context.codingPath + [key]), "the key \"\(key.stringValue)\" is missing.")
    case .valueNotFound(let type, let context):
        return (render(context.codingPath), "expected \(type) but found null.")
    case .typeMismatch(let type, let context):
        return (render(context.codingPath), "expected \(type). \(context.debugDescription)")
    case .dataCorrupted(let context):
        return (render(context.codingPath), context.debugDescription)
    @unknown default:
        return ("", String(describing: error))
    }
}
