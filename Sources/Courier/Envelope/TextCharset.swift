import Foundation

/// The `charset` parameter of a `Content-Type` and the text encodings Courier reads.
enum TextCharset {
    /// The `charset` parameter of a `Content-Type` value, lower-cased and unquoted, or `nil`
    /// when it has none. A `;` or `=` inside a quoted parameter value is part of that value.
    static func name(inContentType value: String?) -> String? {
        guard let value else { return nil }
        for part in HTTPHeaders.parts(of: value, separatedBy: ";").dropFirst() {
            let parameter = HTTPHeaders.parameter(part)
            if parameter.name == "charset", let name = parameter.value { return name.lowercased() }
        }
        return nil
    }

    /// The encoding for a lower-cased charset name, or `nil` for one Courier does not read.
    static func encoding(named name: String) -> String.Encoding? {
        switch name {
        case "utf-8", "utf8": .utf8
        case "us-ascii", "ascii": .ascii
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1": .isoLatin1
        case "windows-1252", "cp1252": .windowsCP1252
        case "utf-16": .utf16
        case "utf-16le": .utf16LittleEndian
        case "utf-16be": .utf16BigEndian
        default: nil
        }
    }

    /// The text of `body` in `encoding`, or `nil` when the bytes are not text in it. A byte
    /// order mark is dropped (Foundation drops UTF-8's and reads `utf-16`'s; the explicit
    /// UTF-16 orders are dropped here). UTF-16 needs an even number of bytes, and without a
    /// byte order mark `utf-16` is big-endian (RFC 2781).
    static func decode(_ body: Data, as encoding: String.Encoding) -> String? {
        var bytes = body
        switch encoding {
        case .utf16, .utf16LittleEndian, .utf16BigEndian:
            guard bytes.count.isMultiple(of: 2) else { return nil }
            if encoding == .utf16LittleEndian, bytes.starts(with: [0xFF, 0xFE]) { bytes = bytes.dropFirst(2) }
            if encoding == .utf16BigEndian, bytes.starts(with: [0xFE, 0xFF]) { bytes = bytes.dropFirst(2) }
        default: break
        }
        return String(data: Data(bytes), encoding: encoding)
    }
}
