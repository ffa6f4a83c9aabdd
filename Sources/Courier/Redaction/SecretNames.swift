/// Judges names by a ``Redactor``'s ``Redactor/names``: a long name (five or more characters,
/// or holding a separator) anywhere in a name, a short one as a word or a word's end.
struct SecretNames {
    /// Matched anywhere in the lower-cased name, its separators left out.
    private let anywhere: [[UInt8]]
    /// Matched against each word, whole or at its end.
    private let words: [[UInt8]]

    init(_ names: Set<String>) {
        var anywhere: [[UInt8]] = []
        var words: [[UInt8]] = []
        for name in names where !name.isEmpty {
            let bytes = Array(name.utf8)
            if bytes.count >= 5 || bytes.contains(where: { !Self.isWordByte($0) }) {
                // Compared without separators: `client_assertion` is `client-assertion` too.
                let joined = bytes.filter(Self.isWordByte)
                if !joined.isEmpty { anywhere.append(joined) }
            } else {
                words.append(bytes)
            }
        }
        self.anywhere = anywhere
        self.words = words
    }

    /// Whether `name` (decoded) marks a secret.
    func matches(_ name: [UInt8]) -> Bool {
        guard !name.isEmpty else { return false }
        let lowered =
            name.contains { $0 >= 0x80 }
            ? Array(String(decoding: name, as: UTF8.self).lowercased().utf8)
            : name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        let joined = lowered.allSatisfy(Self.isWordByte) ? lowered : lowered.filter(Self.isWordByte)
        for needle in anywhere where Self.contains(joined, needle) { return true }
        guard !words.isEmpty else { return false }
        // Words: runs of letters and digits, split again where a lower-case letter or a digit
        // is followed by an upper-case one (`apiKey`, `X-Auth-Token`, `user[pin]`), and where
        // letters and digits meet (`pwd2`, `md5sign`).
        let original = lowered.count == name.count ? name : lowered
        var start = 0
        for index in lowered.indices {
            if !Self.isWordByte(lowered[index]) {
                if index > start, matchesWord(lowered[start..<index]) { return true }
                start = index + 1
            } else if index > start, Self.startsWord(original, at: index) {
                if matchesWord(lowered[start..<index]) { return true }
                start = index
            }
        }
        return start < lowered.count && matchesWord(lowered[start...])
    }

    /// Whether a new word starts at `index` (the one before it being a word byte too): an
    /// upper-case letter after a lower-case one or a digit, or a digit after a letter, or a
    /// letter after a digit.
    private static func startsWord(_ name: [UInt8], at index: Int) -> Bool {
        let previous = name[index - 1]
        let byte = name[index]
        if isUpper(byte), !isUpper(previous) { return true }
        return isDigit(byte) != isDigit(previous) && (isDigit(byte) || isDigit(previous))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Whether one word is a short name or ends with one, also in the plural (`pins`, `keys`).
    private func matchesWord(_ word: ArraySlice<UInt8>) -> Bool {
        let singular = word.last == UInt8(ascii: "s") ? word.dropLast() : word
        return words.contains { needle in
            [word, singular].contains { $0.count >= needle.count && $0.suffix(needle.count).elementsEqual(needle) }
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var index = 0
        while index + needle.count <= haystack.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// A letter, a digit, or a byte of a character beyond ASCII.
    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || byte >= 0x80
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
}
