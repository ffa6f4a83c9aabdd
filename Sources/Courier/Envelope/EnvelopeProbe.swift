import Foundation

/// Reads fields of a JSON body without decoding a type: the business code that layers react to
/// (re-login, token refresh), and the fields of error bodies.
package enum EnvelopeProbe {
    /// The top-level object of a JSON body of at most 8 MB, or `nil`.
    static func object(in body: Data) -> [String: Any]? {
        guard !body.isEmpty, body.count <= 8 << 20 else { return nil }
        return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }

    /// The code of the envelope in `body` as ``BaseModel`` reads it with `decoder` (whose
    /// `userInfo` holds the format), or `nil` when `body` (of at most 8 MB) is not an envelope
    /// in that format, carries no code, or has a success flag that says the call succeeded
    /// (``EnvelopeFailureCode``). The same bytes as the caller's decoding (``JSONBytes``), so the
    /// two never disagree.
    package static func code(in body: Data, decoder: JSONDecoder) -> BusinessCode? {
        guard !body.isEmpty, body.count <= 8 << 20 else { return nil }
        return (try? decoder.decode(EnvelopeFailureCode.self, from: JSONBytes.forDecoding(body, with: decoder)))?.code
    }

    /// The value at a dotted key path (`meta.code`) of a JSON object, or `nil`.
    static func value(at key: String, in object: [String: Any]) -> Any? {
        var names = EnvelopeFormat.path(key)
        let last = names.removeLast()
        var current = object
        for name in names {
            guard let next = current[name] as? [String: Any] else { return nil }
            current = next
        }
        return current[last]
    }

    /// A business code from a JSON string or an integer JSON number; `nil` for anything else,
    /// including a number that is not an integer exactly (`1.5`, `1e300`) and `true`.
    static func businessCode(_ value: Any?) -> BusinessCode? {
        switch value {
        case let text as String: return BusinessCode(text)
        case let number as NSNumber:
            // A JSON `true` is a number too ("c", a C char); a code never is a boolean.
            guard String(cString: number.objCType) != "c" else { return nil }
            // Past Int64 or with a fraction, `int64Value` is some other number: no code at all.
            let integer = number.int64Value
            return number.isEqual(to: NSNumber(value: integer)) ? Int(exactly: integer).map { BusinessCode($0) } : nil
        default: return nil
        }
    }
}
