import Courier
import Foundation

/// The JSON text of an envelope, under the keys an `EnvelopeFormat` names.
enum EnvelopeText {
    /// Encodes the code, message and payload at the format's keys (nested for dotted keys such
    /// as `meta.code`), and the format's success flag, when it has one, as whether `code` is one
    /// of its success codes.
    /// - Returns: The JSON bytes.
    /// - Throws: `EncodingError` when `data` cannot be encoded.
    static func encode(code: BusinessCode, message: String, data: some Encodable, format: EnvelopeFormat) throws
        -> Data
    {
        var root = Node.object([])
        if let successKey = format.successKey {
            root.insert(format.successCodes.contains(code), at: successKey)
        }
        root.insert(code, at: format.codeKey)
        root.insert(message, at: format.messageKey)
        root.insert(data, at: format.dataKey)
        return try JSONEncoder().encode(root)
    }

    /// A JSON value under construction: a leaf, or an object whose members keep their order.
    private enum Node: Encodable {
        case leaf(any Encodable)
        case object([(name: String, node: Node)])

        /// Puts `value` at a dotted path, making the objects along it.
        mutating func insert(_ value: any Encodable, at key: String) {
            insert(value, along: key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...])
        }

        private mutating func insert(_ value: any Encodable, along path: ArraySlice<String>) {
            guard let name = path.first else {
                self = .leaf(value)
                return
            }
            var members: [(name: String, node: Node)] = []
            if case .object(let existing) = self { members = existing }
            let index =
                members.firstIndex { $0.name == name }
                ?? {
                    members.append((name, .object([])))
                    return members.count - 1
                }()
            members[index].node.insert(value, along: path.dropFirst())
            self = .object(members)
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .leaf(let value):
                var container = encoder.singleValueContainer()
                try container.encode(value)
            case .object(let members):
                var container = encoder.container(keyedBy: Key.self)
                for member in members { try container.encode(member.node, forKey: Key(member.name)) }
            }
        }
    }

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
