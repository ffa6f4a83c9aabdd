/// The content of a JSON string, decoded and escaped again, leniently: what redaction reads may
/// be cut short or malformed.
enum JSONText {
    /// The bytes a string's content stands for: each escape decoded (`\uD83D\uDE00` as one
    /// character, a lone surrogate as U+FFFD), a malformed escape kept as written.
    static func decode(_ content: ArraySlice<UInt8>) -> [UInt8] {
        guard content.contains(UInt8(ascii: "\\")) else { return Array(content) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(content.count)
        var index = content.startIndex
        while index < content.endIndex {
            let byte = content[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < content.endIndex else {
                decoded.append(byte)
                index += 1
                continue
            }
            let escaped = content[index + 1]
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                if let (scalar, length) = unicodeEscape(content, at: index) {
                    decoded += Array(String(Character(scalar)).utf8)
                    index += length
                    continue
                }
                decoded += [byte, escaped]
            default: decoded += [byte, escaped]
            }
            index += 2
        }
        return decoded
    }

    /// The character of `\uXXXX` (or a surrogate pair of two) at `index`, and the escape's
    /// length.
    private static func unicodeEscape(_ s: ArraySlice<UInt8>, at index: Int) -> (Unicode.Scalar, Int)? {
        guard let high = hex4(s, at: index + 2) else { return nil }
        if (0xD800..<0xDC00).contains(high), index + 12 <= s.endIndex, s[index + 6] == UInt8(ascii: "\\"),
            s[index + 7] == UInt8(ascii: "u"), let low = hex4(s, at: index + 8), (0xDC00..<0xE000).contains(low)
        {
            let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            return Unicode.Scalar(value).map { ($0, 12) }
        }
        return (Unicode.Scalar(high) ?? "\u{FFFD}", 6)
    }

    private static func hex4(_ s: ArraySlice<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= s.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in s[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Appends `bytes` escaped as a JSON string's content: quotes, backslashes and control
    /// characters, and `/` as `\/` when the original wrote it so.
    static func encode(_ bytes: [UInt8], escapingSlashes: Bool, into output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "/") where escapingSlashes: output += [UInt8(ascii: "\\"), byte]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: output += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: output.append(byte)
            }
        }
    }
}
