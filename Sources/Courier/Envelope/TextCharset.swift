import Foundation

/// The `charset` parameter of a `Content-Type` and the text encodings Courier reads.
enum TextCharset {
    /// The `charset` parameter of a `Content-Type` value, lower-cased and unquoted, or `nil`
    /// when it has none.
    static func name(inContentType value: String?) -> String? {
        guard let value else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            var name = pair[1].trimmingCharacters(in: .whitespaces)
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
                name = String(name.dropFirst().dropLast())
            }
            return name.lowercased()
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
}
