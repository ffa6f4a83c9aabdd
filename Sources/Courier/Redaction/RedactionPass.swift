/// One redaction by a redactor's names. Each reader returns the redacted bytes, or `nil` when
/// nothing in its input was secret, so an unchanged part is kept exactly as written.
///
/// Readers call one another for what a part holds (a query value that is a URL, a JSON string
/// that is JSON); each such call reads a decoded or smaller part one level deeper, so the work
/// is at most ``maximumDepth`` passes over the input.
struct RedactionPass {
    let names: SecretNames
    /// Whether the text is a message for the app's user, whose sentences keep a plain word
    /// after `token:` (see ``TextScanner``).
    var keepsProse = false

    /// The deepest nesting read; a value deeper than this that still holds structure is hidden.
    static let maximumDepth = 8

    static let placeholder = Array(Redactor.placeholder.utf8)

    func isSecret(_ name: some Collection<UInt8>) -> Bool { names.matches(Array(name)) }

    /// A value of unknown shape: JSON, a URL, a form or query, a percent-encoded value, or
    /// text.
    func value(_ s: ArraySlice<UInt8>, depth: Int) -> [UInt8]? {
        // Nothing secret can be told apart without one of these, or a credential that needs no
        // name (most values, words and spaces, are let through here).
        guard s.contains(where: Bytes.isStructural) || Bytes.mayHoldCredential(s) else { return nil }
        guard depth <= Self.maximumDepth else { return Self.placeholder }
        // A byte order mark and spaces before the value say nothing of its shape.
        var first = s.startIndex
        if Bytes.hasPrefix(s, Bytes.byteOrderMark) { first += Bytes.byteOrderMark.count }
        guard let start = s[first...].firstIndex(where: { !Bytes.isSpace($0) }) else { return nil }
        // JSON and text are read by the text reader; a value without spaces, quotes or braces
        // is a URL, a form or query, or an encoded value.
        let plain = !s.contains { Bytes.isSpace($0) || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "{") }
        if plain, s[start] != UInt8(ascii: "[") {
            if Bytes.schemeEnd(in: s, at: start) != nil || s[start] == UInt8(ascii: "/") { return url(s, depth: depth) }
            if s.contains(UInt8(ascii: "=")) { return form(s, depth: depth) }
            if PercentEncoding.hasEscape(s) { return encoded(s, depth: depth) }
        }
        return text(Array(s), depth: depth)
    }

    /// Free text and JSON (see ``TextScanner``).
    func text(_ s: [UInt8], depth: Int) -> [UInt8]? {
        var scanner = TextScanner(pass: self, input: s, depth: depth)
        return scanner.run()
    }

    /// A percent-encoded value: decoded once, redacted, and encoded again (the placeholder
    /// kept readable).
    func encoded(_ s: ArraySlice<UInt8>, depth: Int, plusAsSpace: Bool = false) -> [UInt8]? {
        let decoded = PercentEncoding.decode(bytes: s, plusAsSpace: plusAsSpace)
        guard !decoded.elementsEqual(s), let redacted = value(decoded[...], depth: depth + 1) else { return nil }
        return Self.encodingKeepingPlaceholder(redacted)
    }

    /// A query or a URL-encoded form: pairs split at `&` (or `;`), each judged by its decoded
    /// name; a value that is not secret is read for what it holds.
    func form(_ s: ArraySlice<UInt8>, depth: Int) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(s.count)
        var changed = false
        var start = s.startIndex
        for index in s.indices where s[index] == UInt8(ascii: "&") || s[index] == UInt8(ascii: ";") {
            changed = pair(s[start..<index], depth: depth, into: &output) || changed
            output.append(s[index])
            start = index + 1
        }
        changed = pair(s[start...], depth: depth, into: &output) || changed
        return changed ? output : nil
    }

    /// One `name=value` of a form, or a value alone; whether anything was hidden.
    private func pair(_ s: ArraySlice<UInt8>, depth: Int, into output: inout [UInt8]) -> Bool {
        var valueStart = s.startIndex
        if let equals = s.firstIndex(of: UInt8(ascii: "=")) {
            output += s[..<equals]
            output.append(UInt8(ascii: "="))
            if isSecret(PercentEncoding.decode(bytes: s[..<equals], plusAsSpace: true)) {
                output += Self.placeholder
                return true
            }
            valueStart = equals + 1
        }
        let value = s[valueStart...]
        let escaped = value.contains(UInt8(ascii: "+")) || PercentEncoding.hasEscape(value)
        if let redacted = escaped
            ? encoded(value, depth: depth, plusAsSpace: true) : self.value(value, depth: depth + 1)
        {
            output += redacted
            return true
        }
        output += value
        return false
    }

    /// A URL, absolute or a path with a query: its user information hidden, parameters of its
    /// path segments (`;jsessionid=…`), its query and a fragment with pairs (`#access_token=…`)
    /// read as forms.
    func url(_ s: ArraySlice<UInt8>, depth: Int) -> [UInt8]? {
        // Written inside JSON, with escaped slashes: read as a URL (once), written back so.
        guard Bytes.contains(s, Bytes.escapedSlash) else { return plainURL(s, depth: depth) }
        let plain = Bytes.replacing(s, Bytes.escapedSlash, with: [UInt8(ascii: "/")])
        return plainURL(plain[...], depth: depth).map {
            Bytes.replacing($0[...], [UInt8(ascii: "/")], with: Bytes.escapedSlash)
        }
    }

    /// ``url(_:depth:)`` of a URL without escaped slashes.
    private func plainURL(_ s: ArraySlice<UInt8>, depth: Int) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(s.count)
        var changed = false
        var index = s.startIndex
        // With a scheme, or without one (`//user:password@host/`, relative to the scheme).
        let relative = Bytes.hasPrefix(s, [UInt8(ascii: "/"), UInt8(ascii: "/")]) ? s.startIndex + 2 : nil
        if let authorityStart = Bytes.schemeEnd(in: s, at: s.startIndex) ?? relative {
            output += s[..<authorityStart]
            let authorityEnd = Self.authorityEnd(s, from: authorityStart)
            if let at = Self.userInfoEnd(s, authority: authorityStart..<authorityEnd) {
                output += Self.placeholder
                changed = true
                index = at
            } else {
                index = authorityStart
            }
            let hostEnd = Self.authorityEnd(s, from: index)
            output += s[index..<hostEnd]
            index = hostEnd
        }
        let pathEnd = s[index...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? s.endIndex
        changed = pathParameters(s[index..<pathEnd], depth: depth, into: &output) || changed
        index = pathEnd
        if index < s.endIndex, s[index] == UInt8(ascii: "?") {
            output.append(s[index])
            let queryEnd = s[index...].firstIndex(of: UInt8(ascii: "#")) ?? s.endIndex
            let query = s[(index + 1)..<queryEnd]
            if let redacted = form(query, depth: depth) {
                output += redacted
                changed = true
            } else {
                output += query
            }
            index = queryEnd
        }
        if index < s.endIndex {
            let fragment = s[(index + 1)...]
            output.append(s[index])
            if fragment.contains(UInt8(ascii: "=")), let redacted = form(fragment, depth: depth) {
                output += redacted
                changed = true
            } else if Bytes.isJWT(fragment) {
                output += Self.placeholder
                changed = true
            } else {
                output += fragment
            }
        }
        return changed ? output : nil
    }

    /// Where an authority that starts at `start` ends: at its path, query or fragment.
    private static func authorityEnd(_ s: ArraySlice<UInt8>, from start: Int) -> Int {
        s[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? s.endIndex
    }

    /// The `@` that ends the authority's user information, if it has any. A password with a
    /// `/`, `?` or `#` in it cuts the authority short (`http://ann:p/ss@host/`): when what
    /// follows its `:` is no port, the first `@` after it ends the user information.
    private static func userInfoEnd(_ s: ArraySlice<UInt8>, authority: Range<Int>) -> Int? {
        if let at = s[authority].lastIndex(of: UInt8(ascii: "@")) { return at }
        guard authority.lowerBound < authority.upperBound, s[authority.lowerBound] != UInt8(ascii: "["),
            let colon = s[authority].firstIndex(of: UInt8(ascii: ":")),
            !s[(colon + 1)..<authority.upperBound].allSatisfy(Bytes.isDigit)
        else { return nil }
        return s[authority.upperBound...].firstIndex(of: UInt8(ascii: "@"))
    }

    /// A path, with the values of secret segment parameters (`/app;jsessionid=…/x`) hidden,
    /// and a segment that is percent-encoded (a URL a proxy forwards to) read decoded.
    private func pathParameters(_ s: ArraySlice<UInt8>, depth: Int, into output: inout [UInt8]) -> Bool {
        guard s.contains(UInt8(ascii: ";")) || PercentEncoding.hasEscape(s) || Bytes.contains(s, Array("eyJ".utf8))
        else {
            output += s
            return false
        }
        var changed = false
        var index = s.startIndex
        while index < s.endIndex {
            // Each segment or parameter is read once, from its `/` or `;` to the next.
            output.append(s[index])
            let end = s[(index + 1)...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ";") } ?? s.endIndex
            guard s[index] == UInt8(ascii: ";") else {
                let segment = s[(index + 1)..<end]
                if s[index] == UInt8(ascii: "/"), Bytes.isJWT(segment) {
                    output += Self.placeholder
                    changed = true
                } else if s[index] == UInt8(ascii: "/"), PercentEncoding.hasEscape(segment),
                    let redacted = encoded(segment, depth: depth)
                {
                    output += redacted
                    changed = true
                } else {
                    output += segment
                }
                index = end
                continue
            }
            let parameter = s[(index + 1)..<end]
            if let equals = parameter.firstIndex(of: UInt8(ascii: "=")),
                isSecret(PercentEncoding.decode(bytes: parameter[..<equals], plusAsSpace: false))
            {
                output += parameter[...equals] + Self.placeholder
                changed = true
            } else {
                output += parameter
            }
            index = end
        }
        return changed
    }

    /// A multipart body: each part's content hidden when its field name is secret, otherwise
    /// read as a value; text outside the parts as it is. A body without the boundary is read
    /// as a value.
    func multipart(_ s: [UInt8], boundary: [UInt8]) -> [UInt8]? {
        let delimiter = [UInt8(ascii: "-"), UInt8(ascii: "-")] + boundary
        let starts = Bytes.occurrences(of: delimiter, in: s)
        guard !starts.isEmpty else { return value(s[...], depth: 0) }
        var output = Array(s[..<starts[0]])
        var changed = false
        for (number, start) in starts.enumerated() {
            let partEnd = number + 1 < starts.count ? starts[number + 1] : s.count
            output += delimiter
            let part = s[(start + delimiter.count)..<partEnd]
            // Headers, a blank line, the content, and the line break before the next delimiter
            // (CR LF, or LF alone from a lenient sender).
            let blank = [
                Bytes.firstRange(of: Bytes.blankLine, in: part), Bytes.firstRange(of: [0x0A, 0x0A], in: part),
            ]
            .compactMap { $0 }.min { $0.lowerBound < $1.lowerBound }
            guard let blank else {
                if let redacted = value(part, depth: 1) {
                    output += redacted
                    changed = true
                } else {
                    output += part
                }
                continue
            }
            let headers = part[..<blank.upperBound]
            var contentEnd = part.endIndex
            if Bytes.hasSuffix(part, Bytes.lineBreak), contentEnd - 2 >= blank.upperBound {
                contentEnd -= 2
            } else if Bytes.hasSuffix(part, [0x0A]), contentEnd - 1 >= blank.upperBound {
                contentEnd -= 1
            }
            let content = part[blank.upperBound..<contentEnd]
            output += headers
            if let name = Self.fieldName(in: headers), isSecret(name) {
                output += Self.placeholder
                changed = true
            } else if let redacted = value(content, depth: 1) {
                output += redacted
                changed = true
            } else {
                output += content
            }
            output += part[contentEnd...]
        }
        return changed ? output : nil
    }

    /// The `name` parameter of a part's `Content-Disposition`.
    private static func fieldName(in headers: ArraySlice<UInt8>) -> [UInt8]? {
        let lowered = headers.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        for start in Bytes.occurrences(of: Array("name=".utf8), in: lowered) {
            // `filename=` names no field.
            guard start == 0 || lowered[start - 1] == UInt8(ascii: ";") || Bytes.isSpace(lowered[start - 1]) else {
                continue
            }
            var index = headers.startIndex + start + 5
            let quoted = index < headers.endIndex && headers[index] == UInt8(ascii: "\"")
            if quoted { index += 1 }
            let end =
                headers[index...].firstIndex {
                    quoted ? $0 == UInt8(ascii: "\"") : ($0 == UInt8(ascii: ";") || Bytes.isSpace($0))
                } ?? headers.endIndex
            return Array(headers[index..<end])
        }
        return nil
    }

    /// `bytes` percent-encoded, but for each placeholder in them, which stays readable.
    static func encodingKeepingPlaceholder(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var start = 0
        for found in Bytes.occurrences(of: placeholder, in: bytes) where found >= start {
            PercentEncoding.encode(bytes: bytes[start..<found], into: &output)
            output += placeholder
            start = found + placeholder.count
        }
        PercentEncoding.encode(bytes: bytes[start...], into: &output)
        return output
    }
}
