/// Reads `Link` header fields (RFC 8288): `<https://api.example.com/items?page=2>; rel="next",
/// <…>; rel="last"`.
package enum LinkHeader {
    /// The target of the first link whose `rel` names `relation` (compared ignoring case, among
    /// the space-separated types of its first `rel`), across the fields in order; `nil` when
    /// none does. A link that cannot be read is skipped, and the rest of its field with it when
    /// where it ends cannot be told.
    package static func target(ofRelation relation: String, in fields: [String]) -> String? {
        let wanted = relation.lowercased()
        for field in fields {
            var reader = Reader(Array(field.utf8))
            while let link = reader.nextLink() {
                if let rel = link.rel, rel.lowercased().split(separator: " ").contains(where: { $0 == wanted }) {
                    return link.target
                }
            }
        }
        return nil
    }

    /// One link-value: its target and its first `rel` parameter.
    struct Link {
        let target: String
        let rel: String?
    }

    /// Walks the link-values of one field.
    struct Reader {
        private let bytes: [UInt8]
        private var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        /// The next link-value, or `nil` at the end of the field (or where it cannot go on).
        mutating func nextLink() -> Link? {
            while index < bytes.count {
                skip { $0 == .comma || Self.isSpace($0) }
                guard index < bytes.count else { return nil }
                guard bytes[index] == .lessThan else {
                    // Not a link-value: skip to the next one.
                    skip { $0 != .comma }
                    continue
                }
                guard let close = bytes[index...].firstIndex(of: .greaterThan) else { return nil }
                let target = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                index = close + 1
                return Link(target: target.trimmingSpaces, rel: parameters())
            }
            return nil
        }

        /// Reads the link's parameters up to the comma that ends it; returns its first `rel`.
        private mutating func parameters() -> String? {
            var rel: String?
            while index < bytes.count {
                skip(Self.isSpace)
                guard index < bytes.count, bytes[index] != .comma else { break }
                guard bytes[index] == .semicolon else {
                    index += 1
                    continue
                }
                index += 1
                skip(Self.isSpace)
                let name = token()
                skip(Self.isSpace)
                var value = ""
                if index < bytes.count, bytes[index] == .equals {
                    index += 1
                    skip(Self.isSpace)
                    value = index < bytes.count && bytes[index] == .quote ? quoted() : token()
                }
                if rel == nil, name.lowercased() == "rel" { rel = value }
            }
            return rel
        }

        /// A token: up to a space, `;`, `,` or `=`.
        private mutating func token() -> String {
            let start = index
            skip { !Self.isSpace($0) && $0 != .semicolon && $0 != .comma && $0 != .equals }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// A quoted string from its opening quote, with `\` escapes; to the end of the field
        /// when it is not closed.
        private mutating func quoted() -> String {
            var text: [UInt8] = []
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == .quote { break }
                if byte == .backslash, index < bytes.count {
                    text.append(bytes[index])
                    index += 1
                } else {
                    text.append(byte)
                }
            }
            return String(decoding: text, as: UTF8.self)
        }

        private mutating func skip(_ predicate: (UInt8) -> Bool) {
            while index < bytes.count, predicate(bytes[index]) { index += 1 }
        }

        private static func isSpace(_ byte: UInt8) -> Bool { byte == .space || byte == .tab }
    }
}

extension UInt8 {
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let semicolon = UInt8(ascii: ";")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let lessThan = UInt8(ascii: "<")
    fileprivate static let greaterThan = UInt8(ascii: ">")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
}

extension String {
    /// The text without leading or trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { $0 != .space && $0 != .tab }),
            let last = bytes.lastIndex(where: { $0 != .space && $0 != .tab })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
