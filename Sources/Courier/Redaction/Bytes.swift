/// Byte classes and searches the redaction readers share.
enum Bytes {
    static let escapedSlash = Array(#"\/"#.utf8)
    static let schemeSeparator = Array("://".utf8)
    static let escapedSchemeSeparator = Array(#":\/\/"#.utf8)
    static let blankLine = Array("\r\n\r\n".utf8)
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let lineBreak = Array("\r\n".utf8)

    /// A byte without which no name can be told apart: a quote, a backslash, `=`, `:`, `%`,
    /// `{`, `[` or `<` (an element).
    static func isStructural(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "%"),
            UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "<"):
            true
        default: false
        }
    }

    /// Whether text may hold a credential that needs no name: a JSON Web Token (`eyJ`), or a
    /// word after `Bearer` or `Basic`.
    static func mayHoldCredential(_ s: ArraySlice<UInt8>) -> Bool {
        if contains(s, Array("eyJ".utf8)) { return true }
        var index = s.startIndex
        while let b = s[index...].firstIndex(where: { $0 | 0x20 == UInt8(ascii: "b") }) {
            if hasPrefixIgnoringCase(s[b...], "bearer ") || hasPrefixIgnoringCase(s[b...], "basic ") { return true }
            index = b + 1
        }
        return false
    }

    /// Whether `s` starts with `prefix` (lower-case ASCII), in any case.
    private static func hasPrefixIgnoringCase(_ s: ArraySlice<UInt8>, _ prefix: StaticString) -> Bool {
        guard s.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { expected in
            zip(s, expected).allSatisfy { $0 == $1 || ($0 | 0x20 == $1 && Bytes.isLetter($0)) }
        }
    }

    /// A character of a JSON Web Token: base64url and dots.
    static func isJWTByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".")
    }

    /// Whether `s` is a JSON Web Token: `eyJ`, then base64url with two dots.
    static func isJWT(_ s: ArraySlice<UInt8>) -> Bool {
        hasPrefix(s, Array("eyJ".utf8)) && s.allSatisfy(isJWTByte) && s.filter { $0 == UInt8(ascii: ".") }.count >= 2
    }

    /// Space, tab, carriage return or line feed.
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A byte of a parameter or key name: a letter, a digit, `_`, `-`, `.`, `[`, `]`, or part
    /// of a character beyond ASCII.
    static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
    }

    /// When a URL's scheme starts at `start` (`https://`, or `https:\/\/` inside JSON; an empty
    /// one, `://`, too): where its authority starts.
    static func schemeEnd(in s: ArraySlice<UInt8>, at start: Int) -> Int? {
        var index = start
        while index < s.endIndex,
            isLetter(s[index]) || isDigit(s[index]) || s[index] == UInt8(ascii: "+") || s[index] == UInt8(ascii: "-")
                || s[index] == UInt8(ascii: ".")
        {
            index += 1
        }
        for separator in [schemeSeparator, escapedSchemeSeparator] where hasPrefix(s[index...], separator) {
            return index + separator.count
        }
        return nil
    }

    static func hasPrefix(_ s: ArraySlice<UInt8>, _ prefix: [UInt8]) -> Bool {
        s.count >= prefix.count && s.prefix(prefix.count).elementsEqual(prefix)
    }

    static func hasSuffix(_ s: ArraySlice<UInt8>, _ suffix: [UInt8]) -> Bool {
        s.count >= suffix.count && s.suffix(suffix.count).elementsEqual(suffix)
    }

    static func contains(_ s: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        firstRange(of: needle, in: s) != nil
    }

    /// The first place `needle` occurs in `s`.
    static func firstRange(of needle: [UInt8], in s: ArraySlice<UInt8>) -> Range<Int>? {
        guard let first = needle.first, needle.count <= s.count else { return nil }
        var index = s.startIndex
        while let found = s[index...].firstIndex(of: first), found + needle.count <= s.endIndex {
            if s[found..<(found + needle.count)].elementsEqual(needle) { return found..<(found + needle.count) }
            index = found + 1
        }
        return nil
    }

    /// Where `needle` starts in `s`, each place not overlapping the one before.
    static func occurrences(of needle: [UInt8], in s: [UInt8]) -> [Int] {
        var found: [Int] = []
        var rest = s[...]
        while let range = firstRange(of: needle, in: rest) {
            found.append(range.lowerBound)
            rest = s[range.upperBound...]
        }
        return found
    }

    /// `s` with each `needle` replaced by `replacement`.
    static func replacing(_ s: ArraySlice<UInt8>, _ needle: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(s.count)
        var rest = s
        while let range = firstRange(of: needle, in: rest) {
            output += rest[..<range.lowerBound]
            output += replacement
            rest = rest[range.upperBound...]
        }
        return output + rest
    }
}
