import Foundation

/// Adds or replaces top-level members of a JSON object in its text, leaving every other byte as
/// the caller wrote it: key order, spacing and numbers too large or precise for `Double`
/// (`12345678901234567890`, `0.1000000000000000055`) are kept exactly, which re-encoding the
/// parsed object would not do.
struct JSONObjectText {
    /// A top-level member: its decoded name and where its value's bytes are.
    private struct Member {
        var name: String
        var value: Range<Int>
    }

    private var bytes: [UInt8]
    private var members: [Member] = []
    /// Where the object's closing brace is.
    private var end = 0

    /// Reads a JSON object.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when `json` is not a JSON object.
    init(_ json: Data) throws(NetworkError) {
        // Validated first, so the scan below only ever meets well-formed JSON.
        guard (try? JSONSerialization.jsonObject(with: json)) is [String: Any] else {
            throw NetworkError(.invalidRequest, "Parameters can only be added to a JSON body that is an object.")
        }
        bytes = [UInt8](json)
        try scan()
    }

    /// The text with every change applied.
    var data: Data { Data(bytes) }

    /// Whether the object has a top-level member `name`.
    func contains(_ name: String) -> Bool { members.contains { $0.name == name } }

    /// Sets the top-level member `name` to the string `value`: every member of that name is
    /// changed, or one is added at the end.
    mutating func set(_ name: String, to value: String) {
        let literal = Self.literal(value)
        let matching = members.indices.filter { members[$0].name == name }
        guard !matching.isEmpty else {
            let member = Self.literal(name) + [UInt8(ascii: ":")] + literal
            bytes.insert(contentsOf: (members.isEmpty ? [] : [UInt8(ascii: ",")]) + member, at: end)
            try? scan()
            return
        }
        // From the last, so earlier ranges stay valid.
        for index in matching.reversed() { bytes.replaceSubrange(members[index].value, with: literal) }
        try? scan()
    }

    /// A JSON string literal.
    private static func literal(_ text: String) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return (try? [UInt8](encoder.encode(text))) ?? [UInt8](#""""#.utf8)
    }

    // MARK: - Scanning

    private struct Malformed: Error {}

    /// Finds the top-level members and the closing brace.
    private mutating func scan() throws(NetworkError) {
        do {
            var index = skipSpace(from: 0)
            try expect(UInt8(ascii: "{"), at: index)
            index = skipSpace(from: index + 1)
            var found: [Member] = []
            while try byte(at: index) != UInt8(ascii: "}") {
                let keyEnd = try endOfValue(from: index)
                let name = try decodedName(bytes[index..<keyEnd])
                index = skipSpace(from: keyEnd)
                try expect(UInt8(ascii: ":"), at: index)
                let valueStart = skipSpace(from: index + 1)
                let valueEnd = try endOfValue(from: valueStart)
                found.append(Member(name: name, value: valueStart..<valueEnd))
                index = skipSpace(from: valueEnd)
                if try byte(at: index) == UInt8(ascii: ",") { index = skipSpace(from: index + 1) }
            }
            members = found
            end = index
        } catch {
            throw NetworkError(.invalidRequest, "The JSON body could not be read.")
        }
    }

    private func byte(at index: Int) throws(Malformed) -> UInt8 {
        guard index < bytes.count else { throw Malformed() }
        return bytes[index]
    }

    private func expect(_ expected: UInt8, at index: Int) throws(Malformed) {
        guard try byte(at: index) == expected else { throw Malformed() }
    }

    private func skipSpace(from start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    private func decodedName(_ literal: ArraySlice<UInt8>) throws(Malformed) -> String {
        guard let name = try? JSONDecoder().decode(String.self, from: Data(literal)) else { throw Malformed() }
        return name
    }

    /// Where the value that starts at `start` ends: a string, an object or array (however
    /// deeply nested), or a number or literal.
    private func endOfValue(from start: Int) throws(Malformed) -> Int {
        var index = start
        var depth = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return index }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return index - 1 }  // the enclosing object's end: a bare value ended
                depth -= 1
                if depth == 0 { return index }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
                if depth == 0 { return index - 1 }
            default: break
            }
        }
        guard depth == 0, !inString, index > start else { throw Malformed() }
        return index
    }
}
