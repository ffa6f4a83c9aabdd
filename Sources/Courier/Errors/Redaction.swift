/// Hides secret values before text reaches an error description or a log.
///
/// A name is secret when, lower-cased, it contains one of ``secretNameFragments`` (so `token`,
/// `access_token`, `X-Auth`, `password`, `sign`, `apiKey` all are). Redaction errs on the side
/// of hiding: a harmless value under a secret-looking name is hidden too.
public enum Redaction {
    /// The text that replaces a secret value.
    public static let placeholder = "<redacted>"

    /// Name fragments that mark a parameter, header or JSON key as secret.
    public static let secretNameFragments = [
        "token", "auth", "password", "passwd", "pwd", "secret", "sign", "session", "cookie", "key",
        "credential", "ticket", "hmac",
    ]

    /// Whether a parameter, header or JSON key name marks a secret.
    /// - Parameters:
    ///   - name: The name, in any case.
    ///   - extra: More names (lower-case) to treat as secret, matched exactly.
    /// - Returns: `true` when the value under this name must not be shown.
    public static func isSecret(_ name: some StringProtocol, extra: Set<String> = []) -> Bool {
        let lowered = name.lowercased()
        return extra.contains(lowered) || secretNameFragments.contains { lowered.contains($0) }
    }

    /// Replaces secret values in free text: `"name": value` pairs of JSON, `name=value` pairs
    /// of queries and forms, and the user name and password of URLs (`http://ann:pw@host/`
    /// becomes `http://<redacted>@host/`), wherever they occur, also escaped in JSON or
    /// percent-encoded in a query value.
    /// - Parameters:
    ///   - text: Text such as a URL or a body snippet.
    ///   - extra: More names (lower-case) to treat as secret.
    /// - Returns: The text with each secret value replaced by ``placeholder``.
    public static func redactText(_ text: String, extra: Set<String> = []) -> String {
        let scalars = Array(redactingUserInfo(in: text).unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if let key = keyBeforeValue(in: scalars, at: index),
                case let name = String(String.UnicodeScalarView(scalars[key.name])), isSecret(name, extra: extra)
            {
                // A quoted key may hold pairs of its own (`"a token=x b": 1`).
                output.append(contentsOf: scalars[index..<key.name.lowerBound])
                output.append(contentsOf: redactText(name, extra: extra).unicodeScalars)
                output.append(contentsOf: scalars[key.name.upperBound..<key.valueStart])
                let end = endOfValue(in: scalars, from: key.valueStart)
                if let quote = quoteAround(scalars, key.valueStart..<end),
                    quote == 2 || key.name.lowerBound == index || keyBeforeValue(in: scalars, at: end - 1) != nil
                {
                    // `name="…"`, a value written `\"…\"` inside a JSON string, or a quoted
                    // value whose closing quote opens a key: that quote may be one that opens a
                    // key (`"key=" "password": …`, where the first quote closes a string, or
                    // `"a=b\":"} "password": …`, where what looked like an escaped key was the
                    // end of a string), so it is read again.
                    output.append(contentsOf: scalars[key.valueStart..<(key.valueStart + quote)])
                    output.append(contentsOf: placeholder.unicodeScalars)
                    index = end - quote
                } else {
                    output.append(contentsOf: placeholder.unicodeScalars)
                    index = end
                }
            } else {
                output.append(scalars[index])
                index += 1
            }
        }
        return String(output)
    }

    /// The length of the quote a value both starts and ends with: 1 for `"…"`, 2 for `\"…\"`;
    /// `nil` when it is not quoted so.
    private static func quoteAround(_ s: [Unicode.Scalar], _ value: Range<Int>) -> Int? {
        for quote in [["\\", "\""], ["\""]] as [[Unicode.Scalar]] where value.count >= 2 * quote.count {
            if s[value.prefix(quote.count)].elementsEqual(quote), s[value.suffix(quote.count)].elementsEqual(quote) {
                return quote.count
            }
        }
        return nil
    }

    /// Replaces the user information of every `scheme://user:password@host` in `text`, also
    /// where the URL is written inside JSON (`https:\/\/…`) or percent-encoded in a query value
    /// (`https%3A%2F%2Fann%3Apw%40host`).
    static func redactingUserInfo(in text: String) -> String {
        // Every user info ends in `@`, `%40` or (encoded twice) `%2540`.
        guard text.contains("@") || text.contains("40") else { return text }
        var output = ""
        var rest = Substring(text)
        while let (separator, encoded) = nextSchemeSeparator(in: rest) {
            output += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            if let at = userInfoEnd(in: rest, encoded: encoded) {
                output += placeholder
                rest = rest[at...]
            }
        }
        return output + rest
    }

    /// The first `://`, `:\/\/` (JSON), or a percent-encoded form (`%3A%2F%2F`, `%3A//`,
    /// twice-encoded `%253A%252F%252F`) in `text`.
    private static func nextSchemeSeparator(in text: Substring) -> (Range<Substring.Index>, encoded: Bool)? {
        let found = [
            text.range(of: "://").map { ($0, false) },
            text.range(of: ":\\/\\/").map { ($0, false) },
            text.range(of: "%3A%2F%2F", options: .caseInsensitive).map { ($0, true) },
            text.range(of: "%3A//", options: .caseInsensitive).map { ($0, true) },
            text.range(of: "%253A%252F%252F", options: .caseInsensitive).map { ($0, true) },
        ]
        return found.compactMap { $0 }.min { $0.0.lowerBound < $1.0.lowerBound }
    }

    /// Where the user information that starts `rest` ends (at its `@`), if it has any.
    private static func userInfoEnd(in rest: Substring, encoded: Bool) -> Substring.Index? {
        if encoded {
            // A query or form value: it ends at `&`; `/`, `?`, `#` and `@` may be escaped in it,
            // once or twice.
            let token = rest[..<(rest.firstIndex { "& \t\r\n\"'<>;".contains($0) } ?? rest.endIndex)]
            let authorityEnd =
                ["%2F", "%3F", "%23", "%252F", "%253F", "%2523", "/", "?", "#"]
                .compactMap { token.range(of: $0, options: .caseInsensitive)?.lowerBound }.min() ?? token.endIndex
            let authority = token[..<authorityEnd]
            return ["%40", "%2540", "@"]
                .compactMap { authority.range(of: $0, options: [.caseInsensitive, .backwards])?.lowerBound }.max()
        }
        // The URL ends where the text around it takes over; its authority at the path, query
        // or fragment (`\` for `\/` in JSON).
        let token = rest[..<(rest.firstIndex { " \t\r\n\"'<>".contains($0) } ?? rest.endIndex)]
        let authority = token[..<(token.firstIndex { "/?#\\".contains($0) } ?? token.endIndex)]
        if let at = authority.lastIndex(of: "@") { return at }
        // A password with `/`, `?` or `#` in it leaves no valid URL and no clear authority:
        // hide everything up to the last `@` that follows a `:`.
        if let at = token.lastIndex(of: "@"), token[..<at].contains(":") { return at }
        return nil
    }

    /// When a key starts at `index` (`"key":`, `\"key\":` inside a JSON string, or `key=`):
    /// where its name is, and where its value starts.
    private static func keyBeforeValue(in s: [Unicode.Scalar], at index: Int)
        -> (name: Range<Int>, valueStart: Int)?
    {
        if s[index] == "\"" {
            guard index == 0 || !isNameScalar(s[index - 1]) else { return nil }
            var end = index + 1
            while end < s.count, s[end] != "\"", s[end] != "\n" { end += 1 }
            guard end < s.count, s[end] == "\"" else { return nil }
            var colon = end + 1
            while colon < s.count, isBlank(s[colon]) { colon += 1 }
            guard colon < s.count, s[colon] == ":" else { return nil }
            var value = colon + 1
            while value < s.count, isBlank(s[value]) { value += 1 }
            // Inside a JSON string the closing quote is escaped: `\"pin\"` names `pin`.
            let escaped = index > 0 && s[index - 1] == "\\" && end > index + 1 && s[end - 1] == "\\"
            return ((index + 1)..<(escaped ? end - 1 : end), value)
        }
        guard isNameScalar(s[index]), index == 0 || !isNameScalar(s[index - 1]) else { return nil }
        var end = index
        while end < s.count, isNameScalar(s[end]) { end += 1 }
        guard end < s.count, s[end] == "=" else { return nil }
        return (index..<end, end + 1)
    }

    /// Space, tab or a line break (around a JSON key's colon).
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    /// The end of a value: a quoted JSON string, one escaped inside another JSON string
    /// (`\"token\":\"…\"`, a body logged as text), a JSON object or array (to its matching
    /// bracket, or the end of a truncated snippet), or text up to a separator.
    private static func endOfValue(in s: [Unicode.Scalar], from start: Int) -> Int {
        guard start < s.count else { return start }
        if s[start] == "\"" { return endOfString(in: s, from: start) }
        if s[start] == "\\", start + 1 < s.count, s[start + 1] == "\"" { return endOfEscapedString(in: s, from: start) }
        if s[start] == "{" || s[start] == "[" {
            var depth = 0
            var index = start
            while index < s.count {
                switch s[index] {
                case "\"": index = endOfString(in: s, from: index) - 1
                case "{", "[": depth += 1
                case "}", "]":
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return s.count
        }
        var index = start
        while index < s.count, !"&,}] \n\r\t;\"".unicodeScalars.contains(s[index]) { index += 1 }
        return index
    }

    /// The index just past the JSON string written inside another JSON string that starts at
    /// `start` (`\"…\"`): each `\\` there is a backslash of the inner string, each `\"` a quote,
    /// which ends it unless an inner backslash escapes it (`\"p\\\"ss\"` is `p"ss`).
    private static func endOfEscapedString(in s: [Unicode.Scalar], from start: Int) -> Int {
        var index = start + 2
        var innerEscape = false
        while index + 1 < s.count {
            guard s[index] == "\\" else {
                innerEscape = false
                index += 1
                continue
            }
            if s[index + 1] == "\"", !innerEscape { return index + 2 }
            innerEscape = s[index + 1] == "\\" && !innerEscape
            index += 2
        }
        return s.count
    }

    /// The index just past the JSON string that starts at `start`.
    private static func endOfString(in s: [Unicode.Scalar], from start: Int) -> Int {
        var index = start + 1
        while index < s.count, s[index] != "\"" {
            index += s[index] == "\\" ? 2 : 1
        }
        return min(index + 1, s.count)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-.".unicodeScalars.contains(scalar)
    }
}
