import Courier
import Foundation

extension FuzzTarget {
    static let redactionTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "redaction",
            summary:
                "a secret planted in any nesting of JSON strings, percent-encoding, nested form names, header values, URL user info and free text, and excerpts cut anywhere, never survives redaction",
            check: redaction)
    ]

    /// The secret every planted shape carries.
    private static let canary = "Zq7Canary9"

    /// The input's bytes are choices: which shape carries the canary, how it is nested (a JSON
    /// string in a JSON string, percent-encoding in a query value, a form, free text around
    /// it), the names, the filler text, and where an excerpt is cut. Every output of every
    /// reader is then required to be free of the canary.
    private static func redaction(_ input: UnsafeRawBufferPointer) {
        var choices = Choices(input)
        let carrier = planted(&choices, levels: 0)
        let sample = carrier.text
        guard !choices.filler.contains(canary) else { return }
        let redactor = Redactor.standard
        var outputs = [
            redactor.redact(text: sample),
            redactor.redact(body: Data(sample.utf8), contentType: nil),
            redactor.redact(body: Data(sample.utf8), contentType: "application/json"),
            redactor.redact(body: Data(sample.utf8), contentType: "text/plain; charset=utf-8"),
        ]
        if carrier.isForm {
            outputs.append(redactor.redact(body: Data(sample.utf8), contentType: "application/x-www-form-urlencoded"))
        }
        if carrier.isURL {
            outputs.append(redactor.redact(url: sample))
        }
        // Header values: under names that say nothing, and under a secret one.
        let headers: HTTPHeaders = [
            "Referer": sample, "X-Callback-URL": sample, "Link": "<\(sample)>; rel=\"next\"",
            secretNames[choices.next(secretNames.count)]: canary,
        ]
        outputs += redactor.redact(headers: headers).fields.map { "\($0.name): \($0.value)" }
        // A multipart text field holding the sample, and one under a secret name.
        let multipart = [
            "--b0", "Content-Disposition: form-data; name=\"note\"", "", sample, "--b0",
            "Content-Disposition: form-data; name=\"\(name(&choices))\"", "", canary, "--b0--", "",
        ].joined(separator: "\r\n")
        outputs.append(redactor.redact(body: Data(multipart.utf8), contentType: "multipart/form-data; boundary=b0"))
        // An excerpt of filler and the sample, cut at a chosen offset.
        let padded = String(repeating: "x", count: choices.next(600)) + " " + sample
        outputs.append(redactor.redact(body: Data(padded.utf8), contentType: nil, limit: choices.next(700)))
        for output in outputs {
            require(!output.contains(canary), "\(sample.debugDescription) redacted to \(output.debugDescription)")
        }
    }

    private static let secretNames = [
        "token", "access_token", "password", "passwd", "pwd", "pass", "secret", "sign", "signature", "session",
        "JSESSIONID", "cookie", "api_key", "apiKey", "appkey", "credential", "ticket", "hmac", "jwt",
        "client_assertion", "otp", "pin", "cardPin", "X-Auth-Token", "Authorization", "refreshToken",
    ]

    /// A secret name, nested or not: `pin`, `user[pin]`, `a.b.pin`, `account[pin][0]`, `PIN`.
    private static func name(_ choices: inout Choices) -> String {
        let base = secretNames[choices.next(secretNames.count)]
        return switch choices.next(5) {
        case 1: "user[\(base)]"
        case 2: "a.b.\(base)"
        case 3: "account[\(base)][0]"
        case 4: base.uppercased()
        default: base
        }
    }

    /// A text that carries the canary, and whether it is a URL or a form as a whole.
    private struct Carrier {
        var text: String
        var isURL = false
        var isForm = false
    }

    /// A shape that carries the canary, or (three levels at most) another one nested in JSON,
    /// percent-encoding, a form or free text.
    private static func planted(_ choices: inout Choices, levels: Int) -> Carrier {
        let name = name(&choices)
        let encodedName = choices.next(2) == 0 ? name : PercentEncoding.encode(name)
        switch choices.next(levels < 3 ? 12 : 7) {
        case 0: return Carrier(text: "\(encodedName)=\(canary)&page=1", isForm: true)
        case 1: return Carrier(text: "{\"\(name)\":\"\(canary)\",\"n\":1}")
        case 2: return Carrier(text: "{\"\(name)\":{\"x\":[\"\(canary)\"]}}")
        case 3: return Carrier(text: "https://\(choices.word()):\(canary)@host.example/p?q=1", isURL: true)
        case 4: return Carrier(text: "https://host.example/p?x=1&\(encodedName)=\(canary)#f", isURL: true)
        case 5: return Carrier(text: "\(name): \(canary)")
        case 6: return Carrier(text: "Authorization: Bearer \(canary)")
        default: break
        }
        let inner = planted(&choices, levels: levels + 1).text
        switch choices.next(5) {
        case 0:
            let string = String(decoding: (try? JSONEncoder().encode(inner)) ?? Data(), as: UTF8.self)
            return Carrier(text: "{\"note\":\(string),\"code\":0}")
        case 1:
            return Carrier(text: "https://api.example/cb?next=\(PercentEncoding.encode(inner))&a=b", isURL: true)
        case 2:
            return Carrier(text: "x=1&next=\(PercentEncoding.encode(inner))", isForm: true)
        case 3:
            return Carrier(text: "\(choices.filler(12)) \(inner) \(choices.filler(12))")
        default:
            let string = String(decoding: (try? JSONEncoder().encode(inner)) ?? Data(), as: UTF8.self)
            return Carrier(text: "failed: \(choices.filler(8)) {\"detail\":\(string)}")
        }
    }
}

/// The fuzzer's bytes read as choices; past their end every choice is the first.
private struct Choices {
    private let bytes: [UInt8]
    private var index = 0
    /// Every filler text handed out, to skip an input whose filler spells the canary.
    private(set) var filler = ""

    init(_ input: UnsafeRawBufferPointer) { bytes = Array(input) }

    mutating func next(_ count: Int) -> Int {
        guard index < bytes.count, count > 0 else { return 0 }
        defer { index += 1 }
        return Int(bytes[index]) % count
    }

    /// Letters and digits, as a user name.
    mutating func word() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let text = String((0..<(1 + next(8))).map { _ in letters[next(letters.count)] })
        filler += text
        return text
    }

    /// Text of up to `length` characters, with the punctuation of prose and of queries, but no
    /// quote or backslash (one left open would join the text it opens to the planted shape).
    mutating func filler(_ length: Int) -> String {
        let characters = Array("abcXYZ019 .,;:!?-_/()+*#&=@%{}[]<>é中")
        let text = String((0..<next(length + 1)).map { _ in characters[next(characters.count)] })
        filler += text
        return text
    }
}
