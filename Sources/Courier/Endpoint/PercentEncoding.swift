/// The one percent-encoder Courier uses for query strings, form bodies and path text.
///
/// Every byte of the UTF-8 form is escaped as `%XX` except RFC 3986's unreserved characters
/// (`A–Z a–z 0–9 - . _ ~`), so reserved characters (`&`, `=`, `+`, `#`, `?`, `/`, `%`, …),
/// spaces, non-ASCII text and emoji all round-trip exactly. A space becomes `%20`, never `+`.
///
/// ```swift
/// let encoded = PercentEncoding.encode("a+b c&d")  // "a%2Bb%20c%26d"
/// ```
public enum PercentEncoding {
    /// Percent-encodes everything but RFC 3986 unreserved characters.
    /// - Parameter text: Unencoded text.
    /// - Returns: The encoded text.
    public static func encode(_ text: some StringProtocol) -> String {
        // Most names and values need no escape: they are returned without a copy of their bytes.
        if text.utf8.allSatisfy(isUnreserved) { return String(text) }
        return String(unsafeUninitializedCapacity: maximumEncodedCount(text)) { write(text, to: $0, at: 0) }
    }

    /// The most bytes the encoding of `text` can take: three for each byte.
    static func maximumEncodedCount(_ text: some StringProtocol) -> Int { text.utf8.count * 3 }

    /// Writes the encoding of `text` (as ``encode(_:)`` writes it) into `output` from `offset`,
    /// which has room for ``maximumEncodedCount(_:)`` bytes there, and returns the offset after it.
    static func write(_ text: some StringProtocol, to output: UnsafeMutableBufferPointer<UInt8>, at offset: Int)
        -> Int
    {
        // Checked once here so that the writes below cannot run past the buffer in any build.
        precondition(offset >= 0 && maximumEncodedCount(text) <= output.count - offset, "no room to encode")
        // A native string's bytes are read in place; others are copied out once.
        if let count = text.utf8.withContiguousStorageIfAvailable({ write($0, to: output, at: offset) }) {
            return count
        }
        return Array(text.utf8).withUnsafeBufferPointer { write($0, to: output, at: offset) }
    }

    /// Writes the encoding of `bytes` into `output` from `offset`, which has room for three
    /// bytes for each of them.
    private static func write(
        _ bytes: UnsafeBufferPointer<UInt8>, to output: UnsafeMutableBufferPointer<UInt8>, at offset: Int
    ) -> Int {
        var count = offset
        for byte in bytes { count = put(byte, escaped: !isUnreserved(byte), into: output, at: count) }
        return count
    }

    /// Writes `byte` into `output` at `offset`, as it is or as its `%XX` escape, and returns the
    /// offset after it: the one escape loop of the encodings here.
    @inline(__always)
    private static func put(
        _ byte: UInt8, escaped: Bool, into output: UnsafeMutableBufferPointer<UInt8>, at offset: Int
    ) -> Int {
        guard escaped else {
            output[offset] = byte
            return offset + 1
        }
        output[offset] = UInt8(ascii: "%")
        output[offset + 1] = hexDigit(byte >> 4)
        output[offset + 2] = hexDigit(byte & 0x0F)
        return offset + 3
    }

    /// Percent-encodes text that is already URL syntax (an endpoint path): keeps `/`, the
    /// characters RFC 3986 allows in a path (`! $ & ' ( ) * + , ; = : @`) and `%XX` escapes that
    /// are already there; encodes spaces, `#`, `?`, a lone `%`, non-ASCII text and the rest.
    static func encodePath(_ text: some StringProtocol) -> String { encode(text, keeping: "/!$&'()*+,;=:@") }

    /// Percent-encodes text that is already a query's `name=value` (one a server or the caller
    /// wrote): keeps what RFC 3986 allows in a query (unreserved characters,
    /// `! $ & ' ( ) * + , ; = : @ / ?`) and the `%XX` escapes already there, as `URL(string:)`
    /// does; encodes a lone `%`, `|`, `[`, `]`, spaces and the rest.
    static func encodeQuery(_ text: some StringProtocol) -> String { encode(text, keeping: "/?!$&'()*+,;=:@") }

    /// Percent-encodes all but unreserved characters, those in `kept` and `%XX` escapes.
    private static func encode(_ text: some StringProtocol, keeping kept: String) -> String {
        let utf8 = Array(text.utf8)
        return escaping(utf8) { index in
            let byte = utf8[index]
            if isUnreserved(byte) || kept.utf8.contains(byte) { return true }
            return byte == UInt8(ascii: "%") && index + 2 < utf8.count && hexValue(utf8[index + 1]) != nil
                && hexValue(utf8[index + 2]) != nil
        }
    }

    /// Escapes every byte at an index for which `keep` is false.
    private static func escaping(_ utf8: [UInt8], keep: (Int) -> Bool) -> String {
        // Written straight into the string's storage: at most three bytes for each byte.
        String(unsafeUninitializedCapacity: utf8.count * 3) { output in
            var count = 0
            for index in utf8.indices { count = put(utf8[index], escaped: !keep(index), into: output, at: count) }
            return count
        }
    }

    /// Decodes `%XX` escapes. Other characters are kept as they are, `+` included; a malformed
    /// escape (`%G1`, a lone `%`) is kept as written, and bytes that are not UTF-8 become U+FFFD.
    /// - Parameter text: Encoded text.
    /// - Returns: The decoded text.
    public static func decode(_ text: some StringProtocol) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return String(decoding: decode(bytes: utf8[...], plusAsSpace: false), as: UTF8.self)
    }

    /// Decodes `%XX` escapes in bytes, and `+` as a space when `plusAsSpace` (a form's
    /// encoding); a malformed escape is kept as written.
    static func decode(bytes: ArraySlice<UInt8>, plusAsSpace: Bool) -> [UInt8] {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return decoded
    }

    /// Whether `bytes` hold a well-formed `%XX` escape.
    static func hasEscape(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            if percent + 2 < bytes.endIndex, hexValue(bytes[percent + 1]) != nil, hexValue(bytes[percent + 2]) != nil {
                return true
            }
            index = percent + 1
        }
        return false
    }

    /// Appends `bytes` to `output` with every byte but the unreserved ones escaped.
    static func encode(bytes: ArraySlice<UInt8>, into output: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hexDigit(byte >> 4), hexDigit(byte & 0x0F)]
            }
        }
    }

    /// The upper-case hex digit of a value below 16.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") - 10 + value
    }

    /// Whether `byte` is an RFC 3986 unreserved character: `A–Z a–z 0–9 - . _ ~`, one bit each
    /// in two masks (bytes 0–63, then 64–127).
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        // Bits 45 `-`, 46 `.`, 48–57 `0–9`.
        let low: UInt64 = 0x03FF_6000_0000_0000
        // Bits 65–90 `A–Z`, 95 `_`, 97–122 `a–z`, 126 `~`, less 64.
        let high: UInt64 = 0x47FF_FFFE_87FF_FFFE
        return switch byte {
        case 0..<64: low >> byte & 1 == 1
        case 64..<128: high >> (byte - 64) & 1 == 1
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
