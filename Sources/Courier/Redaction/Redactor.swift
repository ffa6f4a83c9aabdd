import Foundation

/// Hides secrets before traffic is written down: in ``NetworkError/description``, the
/// ``LoggingInterceptor``'s lines and ``HTTPRequest/curlCommand(redactor:bodyLimit:)``.
///
/// It reads what it redacts rather than searching it for patterns:
///
/// - A URL is split into its parts. Its user name and password are hidden; each query pair is
///   judged by its decoded name; a value that is itself a URL, a query or JSON, percent-encoded
///   once or more, is redacted inside and encoded again.
/// - A form (a URL-encoded body, multipart text fields) is judged by each decoded name; a nested
///   name (`user[password]`, `account[api_key]`, `a.b.token`) is secret when any of its parts is.
/// - JSON is tokenized: the value of a secret key is replaced whole, whatever its type, by the
///   string `"<redacted>"`; a string value that is itself JSON, a URL or a query is redacted
///   inside, at any depth of escaping.
/// - A header's value is hidden when its name is secret, and otherwise redacted as text, so a
///   URL with a password in `Referer`, `Location` or `Link` loses it.
/// - Free text, what none of the above recognizes (a message, a text body), is read for the
///   same shapes: JSON strings and keys, also escaped inside other text; URLs; `name=value`,
///   `name: value` and `name => value` pairs (`Authorization: Bearer …`, Python, Ruby and
///   Swift descriptions); elements with a secret name (`<Password>…</Password>`); the word
///   after `Bearer` or `Basic`; JSON Web Tokens. In a message for the app's user
///   (``NetworkError``'s `localizedDescription`), a plain word after a colon is kept:
///   `Invalid token: please log in again`.
///
/// Every output is cut to length only after it is redacted. The work is linear in the input;
/// past ``inputLimit`` bytes the input is not shown. Values nested more than eight levels
/// deep (a URL in a query in a JSON string, and so on) are hidden whole when they still hold
/// structure.
///
/// ```swift
/// let redactor = Redactor.standard.adding(["idCard"]).removing(["session"])
/// let line = redactor.redact(url: "https://api.example.com/v1/me?idCard=X&page=1")
/// // https://api.example.com/v1/me?idCard=<redacted>&page=1
/// ```
///
/// Give your own to the client with ``NetworkClient/Configuration/redactor``; the logging
/// layer and the errors the client throws use it.
public struct Redactor: Sendable, Hashable {
    /// The text that replaces a secret value.
    public static let placeholder = "<redacted>"

    /// The names that mark a value as secret unless you remove them: `token`, `auth`,
    /// `authorization`, `authentication`, `password`, `passwd`, `pwd`, `pass`, `passphrase`,
    /// `passcode`, `secret`, `sign`, `signature`, `sig`, `session`, `sessid`, `sid`, `cookie`,
    /// `key`, `apikey`, `credential`, `ticket`, `hmac`, `jwt`, `assertion`, `verifier`, `otp`,
    /// `otpcode`, `pin`, `pincode`, `smscode`, `verifycode` and `verificationcode`. An
    /// envelope's `code` and `msg` stay visible.
    public static let standardNames: Set<String> = [
        "token", "auth", "authorization", "authentication", "password", "passwd", "pwd", "pass", "passphrase",
        "passcode", "secret", "sign", "signature", "sig", "session", "sessid", "sid", "cookie", "key", "apikey",
        "credential", "ticket", "hmac", "jwt", "assertion", "verifier", "otp", "otpcode", "pin", "pincode",
        "smscode", "verifycode", "verificationcode",
    ]

    /// The redactor with ``standardNames``.
    public static let standard = Redactor()

    /// The most bytes of one input that are read and shown (1 MiB): the rest is left out and
    /// its size noted, so redaction takes bounded time whatever a server sends.
    public static let inputLimit = 1 << 20

    /// The names that mark a value as secret, lower-case.
    ///
    /// A name of five or more characters, or with a `-`, `_` or `.` in it, marks every
    /// parameter, header or key whose name contains it, in any case and with its separators
    /// left out: `token` marks `access_token`, `X-Auth-Token` and `refreshtoken`, and
    /// `smscode` marks `sms_code`. A shorter one marks a name with a word that is it or ends
    /// with it, words being split at `-`, `_`, `.`, `[`, `]`, lower-to-upper case changes and
    /// where letters and digits meet: `pin` marks `pin`, `card_pin`, `cardPin` and `pin2` but
    /// not `shipping`; `key` marks `api_key` and `appkey` but not `keyword`.
    public private(set) var names: Set<String>

    /// Creates a redactor.
    /// - Parameter names: The names that mark a value as secret (see ``names``).
    public init(names: Set<String> = Redactor.standardNames) {
        self.names = Set(names.map { $0.lowercased() })
    }

    /// This redactor, also hiding the values of `names`.
    /// - Parameter names: More names (see ``names``), in any case.
    /// - Returns: The redactor.
    public func adding(_ names: some Sequence<String>) -> Redactor {
        Redactor(names: self.names.union(names.map { $0.lowercased() }))
    }

    /// This redactor, no longer hiding what only `names` marked.
    /// - Parameter names: Names to remove, in any case.
    /// - Returns: The redactor.
    public func removing(_ names: some Sequence<String>) -> Redactor {
        Redactor(names: self.names.subtracting(names.map { $0.lowercased() }))
    }

    /// Whether a parameter, header or JSON key name marks its value as secret (see ``names``).
    /// - Parameter name: The name, decoded, in any case.
    /// - Returns: `true` when the value under this name must not be shown.
    public func isSecret(_ name: some StringProtocol) -> Bool {
        SecretNames(names).matches(Array(name.utf8))
    }

    /// A URL with its user name, password and secret parameters hidden.
    /// - Parameter url: An absolute URL, or a path with a query.
    /// - Returns: The text of the URL, redacted.
    public func redact(url: String) -> String {
        bounded(url) { pass, bytes in pass.url(bytes[...], depth: 0) }
    }

    /// A URL with its user name, password and secret parameters hidden.
    /// - Parameter url: The URL.
    /// - Returns: The text of the URL, redacted.
    public func redact(url: URL) -> String {
        redact(url: url.absoluteString)
    }

    /// Header fields with secret values hidden: every value of a secret-named field (such as
    /// `Authorization`, `Cookie`, `Set-Cookie`, `X-Auth-Token`), and any secret inside the
    /// others (a URL with a password or a token in `Referer`, `Location`, `Link`).
    /// - Parameter headers: The fields.
    /// - Returns: The same fields in the same order, with their values redacted.
    public func redact(headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.fields.map { HTTPHeaders.Field(name: $0.name, value: redact(field: $0.name, value: $0.value)) })
    }

    /// A body as text with its secrets hidden, read as its media type says: JSON, a URL-encoded
    /// form, a multipart form (each text field judged by its name), or otherwise as text,
    /// recognizing JSON and forms by their shape.
    /// - Parameters:
    ///   - body: The body's bytes, read as UTF-8.
    ///   - contentType: Its `Content-Type`, if known.
    ///   - limit: The most bytes of redacted text to return; a longer text is cut there, at a
    ///     character's end, and the body's size is added. `nil` for no limit.
    /// - Returns: The redacted text.
    public func redact(body: Data, contentType: String?, limit: Int? = nil) -> String {
        let shown = body.prefix(Self.inputLimit)
        let bytes = Array(shown)
        let pass = RedactionPass(names: SecretNames(names))
        let redacted: [UInt8]
        switch BodyKind(contentType: contentType) {
        case .form: redacted = pass.form(bytes[...], depth: 0) ?? bytes
        case .multipart(let boundary): redacted = pass.multipart(bytes, boundary: boundary) ?? bytes
        case .other: redacted = pass.value(bytes[...], depth: 0) ?? bytes
        }
        return Self.cut(redacted, limit: limit, total: body.count, unit: "bytes", cut: body.count > shown.count)
    }

    /// A body's bytes with their secrets hidden, read as ``redact(body:contentType:limit:)``
    /// reads them, but whole and as bytes (also when they are not all UTF-8): for an archive
    /// that must keep every byte that is not secret.
    func redactedWhole(body bytes: [UInt8], contentType: String?) -> [UInt8] {
        let pass = RedactionPass(names: SecretNames(names))
        switch BodyKind(contentType: contentType) {
        case .form: return pass.form(bytes[...], depth: 0) ?? bytes
        case .multipart(let boundary): return pass.multipart(bytes, boundary: boundary) ?? bytes
        case .other: return pass.value(bytes[...], depth: 0) ?? bytes
        }
    }

    /// Free text, such as a message or an error's description, with the secrets it holds
    /// hidden: JSON keys and strings, URLs, `name=value` and `name: value` pairs.
    /// - Parameters:
    ///   - text: The text.
    ///   - limit: The most characters of redacted text to return; a longer text is cut there
    ///     and its length added. `nil` for no limit.
    /// - Returns: The redacted text.
    public func redact(text: String, limit: Int? = nil) -> String {
        redact(text: text, limit: limit, keepsProse: false)
    }

    /// ``redact(text:limit:)`` of a message for the app's user: a plain word after a colon in a
    /// sentence (`Invalid token: please log in again`) is kept.
    func redact(message: String, limit: Int?) -> String {
        redact(text: message, limit: limit, keepsProse: true)
    }

    private func redact(text: String, limit: Int?, keepsProse: Bool) -> String {
        let redacted = bounded(text, keepsProse: keepsProse) { pass, bytes in pass.text(bytes, depth: 0) }
        guard let limit, redacted.count > limit else { return redacted }
        return String(redacted.prefix(max(limit, 0))) + "… (\(text.count) characters)"
    }

    /// A value under a name (a header's, a multipart field's): hidden whole when the name is
    /// secret, otherwise redacted by what it holds.
    func redact(field name: String, value: String) -> String {
        if isSecret(name) { return Self.placeholder }
        return bounded(value) { pass, bytes in pass.value(bytes[...], depth: 0) }
    }

    /// Runs `redact` on the first ``inputLimit`` bytes of `text`.
    private func bounded(
        _ text: String, keepsProse: Bool = false, _ redact: (RedactionPass, [UInt8]) -> [UInt8]?
    ) -> String {
        let utf8 = text.utf8
        let bytes = Array(utf8.prefix(Self.inputLimit))
        let redacted = redact(RedactionPass(names: SecretNames(names), keepsProse: keepsProse), bytes)
        if utf8.count > bytes.count {
            return Self.cut(redacted ?? bytes, limit: nil, total: utf8.count, unit: "bytes", cut: true)
        }
        return redacted.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// `bytes` as text, at most `limit` bytes of it (cut at a character's end), noting the
    /// input's `total` size when anything is left out.
    private static func cut(_ bytes: [UInt8], limit: Int?, total: Int, unit: String, cut: Bool) -> String {
        var end = bytes.count
        if let limit, end > limit {
            end = max(limit, 0)
            // Back to the start of a character: never past a UTF-8 continuation byte.
            while end > 0, end < bytes.count, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        }
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        return end < bytes.count || cut ? text + "… (\(total) \(unit))" : text
    }
}

/// How a body is read, by its media type.
enum BodyKind {
    case form
    case multipart(boundary: [UInt8])
    case other

    init(contentType: String?) {
        let lowered = contentType?.lowercased() ?? ""
        if lowered.hasPrefix("application/x-www-form-urlencoded") {
            self = .form
        } else if lowered.hasPrefix("multipart/"), let boundary = Self.boundary(in: contentType ?? "") {
            self = .multipart(boundary: boundary)
        } else {
            self = .other
        }
    }

    /// The `boundary` parameter of a multipart media type, unquoted.
    static func boundary(in contentType: String) -> [UInt8]? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            // At most 70 characters (RFC 2046): a longer one is no boundary, and searching for it
            // would cost its length at every byte.
            return value.isEmpty || value.utf8.count > 70 ? nil : Array(value.utf8)
        }
        return nil
    }
}
