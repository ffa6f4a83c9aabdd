import Foundation

/// What Courier itself reads from an answer's JSON body, beside the caller's decoding: the
/// envelope's code and message (for the session's layer, the signing layer's clock, a request's
/// timeline, and the error of an answer refused by its status), an older backend's error fields,
/// and the numbers the signing layer's clock correction asks for.
///
/// It is read with the client's decoder (whose `userInfo` holds the envelope format), so its
/// code is the code ``BaseModel`` decodes. The answer keeps it beside its body (see
/// ``BodyReading``); when a layer asks for it before the endpoint's envelope is decoded, the
/// envelope is decoded in the same pass. A body that is empty, larger than 8 MB or not a JSON
/// object reads as a view with nothing in it.
package struct EnvelopeView: Sendable {
    /// The code at the format's code key, whatever its success flag says.
    package var code: BusinessCode?
    /// The code that fails a call as ``BaseModel`` judges it: the code, unless the format has a
    /// success flag that says the call succeeded. `nil` when the body is not an envelope in the
    /// format or carries no code.
    package var failureCode: BusinessCode?
    /// The message at the format's message key.
    package var message: String?
    /// An older backend's error fields, when the body has at least one of them.
    var errorFields: ErrorFields?
    /// The numbers at the keys (or dotted paths) the decoder asked for
    /// (`userInfo[.envelopeNumberKeys]`), by key.
    var numbers: [String: Double] = [:]
    /// The keys the numbers were looked for at, found or not.
    var numberKeys: Set<String> = []

    /// An older backend's error body: `{"errorCode": …, "errorDescription": …, "content": …}`.
    struct ErrorFields: Sendable {
        var errorCode: BusinessCode?
        var errorDescription: String?
        var content: String?
    }

    /// The largest body read: 8 MB.
    static let largestBody = 8 << 20

    /// Whether a view reads `body`: one that is empty or larger than ``largestBody`` reads as
    /// ``empty(for:)``.
    static func reads(_ body: Data) -> Bool { !body.isEmpty && body.count <= largestBody }

    /// The view of `body` as `decoder` reads it.
    static func read(_ body: Data, with decoder: JSONDecoder) -> EnvelopeView {
        guard reads(body),
            let read = try? decoder.decode(Decoded.self, from: JSONBytes.forDecoding(body, with: decoder))
        else { return empty(for: decoder) }
        return read.view
    }

    /// The view with nothing in it (of a body that is empty, too large or not a JSON object), as
    /// `decoder` asks for it.
    static func empty(for decoder: JSONDecoder) -> EnvelopeView {
        EnvelopeView(numberKeys: decoder.userInfo[.envelopeNumberKeys] as? Set<String> ?? [])
    }

    /// The view of what `decoder` decodes, each field on its own, so one that does not read
    /// leaves the others; a view with nothing in it when that is not a JSON object.
    init(from decoder: any Decoder) {
        let format = decoder.userInfo[.envelopeFormat] as? EnvelopeFormat ?? .standard
        numberKeys = decoder.userInfo[.envelopeNumberKeys] as? Set<String> ?? []
        guard let root = try? decoder.container(keyedBy: EnvelopeKey.self) else { return }
        code = (try? root.value(BusinessCode.self, at: format.codeKey)) ?? nil
        if let successKey = format.successKey, (try? root.value(Bool.self, at: successKey)) == true {
            failureCode = nil
        } else {
            failureCode = code
        }
        message = (try? root.value(String.self, at: format.messageKey)) ?? nil
        let legacy = ["errorCode", "errorDescription", "content"].map(EnvelopeKey.init)
        if legacy.contains(where: { root.contains($0) && (try? root.decodeNil(forKey: $0)) == false }) {
            errorFields = ErrorFields(
                errorCode: (try? root.decodeIfPresent(BusinessCode.self, forKey: legacy[0])) ?? nil,
                errorDescription: (try? root.decodeIfPresent(String.self, forKey: legacy[1])) ?? nil,
                content: (try? root.decodeIfPresent(String.self, forKey: legacy[2])) ?? nil)
        }
        for key in numberKeys {
            if let number = (try? root.value(Double.self, at: key)) ?? nil { numbers[key] = number }
        }
    }

    private init(numberKeys: Set<String>) {
        self.numberKeys = numberKeys
    }

    /// The number at `key`, or `nil` when there is none; `nil` too when the view was not asked
    /// to look there (see ``numberKeys``).
    func number(at key: String) -> Double? { numbers[key] }

    /// The view as a `Decodable`, for ``read(_:with:)``.
    private struct Decoded: Decodable {
        let view: EnvelopeView
        init(from decoder: any Decoder) { view = EnvelopeView(from: decoder) }
    }
}

extension CodingUserInfoKey {
    /// The keys (or dotted paths) of numbers an ``EnvelopeView`` reads, as a `Set<String>`: those
    /// the signing layers' clock corrections read the server's time from.
    static let envelopeNumberKeys = CodingUserInfoKey(rawValue: "courier.envelopeNumberKeys")!
}
