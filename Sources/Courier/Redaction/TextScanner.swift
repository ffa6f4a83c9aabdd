/// Reads JSON, and free text as the fallback, token by token:
///
/// - A string (`"…"` with JSON escapes, or one escaped inside other text, `\"…\"`,
///   `\\\"…\\\"`) followed by `:`, `=` or `=>` is a key: when its name is secret, its value (a
///   string at the same level of escaping, an object, array or parenthesized block to its
///   closing bracket, or a bare word) is replaced by `"<redacted>"`. Any other string is
///   decoded, read as a value and, when that hid something, written back with the same
///   escaping.
/// - A URL (from its `://`, whatever comes before) is read by ``RedactionPass/url(_:depth:)``.
/// - `name=value`, `name: value` and `name => value` with a secret name (also `'name':` and a
///   name whose opening quote a stray quote took): the value is hidden (a quoted value or a
///   wrapper such as `Optional("…")` whole; `Authorization: Bearer …` both words; a header
///   line to its end). A value under another name that is percent-encoded is decoded and read
///   as a value.
/// - The text of an element with a secret name (`<Password>…</Password>`), the word after
///   `Bearer` or `Basic`, and a JSON Web Token are hidden.
/// - A word that is percent-encoded is decoded and read as a value.
struct TextScanner {
    let pass: RedactionPass
    let input: [UInt8]
    let depth: Int
    var output: [UInt8] = []
    var changed = false
    /// The end of the last word found to hold no `%XX` escape: a word that starts before it
    /// ends there too, so it is not read again.
    var plainWordEnd = 0
    /// Whether the scanner is inside the tag of an element with a secret name.
    var insideSecretTag = false
    /// Whether a name key of the current object named a secret (see ``nameKeys``); the object's
    /// end forgets it.
    private var secretValueFollows = false

    init(pass: RedactionPass, input: [UInt8], depth: Int) {
        self.pass = pass
        self.input = input
        self.depth = depth
    }

    /// The redacted text, or `nil` when nothing was hidden.
    mutating func run() -> [UInt8]? {
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                let run = backslashRun(at: index)
                if index + run < input.count, input[index + run] == UInt8(ascii: "\"") {
                    index = string(at: index, level: run)
                } else {
                    // Backslashes that open no string are kept, all at once.
                    output += input[index..<(index + max(run, 1))]
                    index += max(run, 1)
                }
                continue
            }
            if byte == UInt8(ascii: "}") { secretValueFollows = false }
            if byte == UInt8(ascii: ">"), insideSecretTag {
                index = secretElementText(at: index)
                continue
            }
            if byte == UInt8(ascii: "<") {
                insideSecretTag = false
                if let next = element(at: index) {
                    index = next
                    continue
                }
            }
            if Bytes.isNameByte(byte) || byte == UInt8(ascii: "%"),
                index == 0 || !(Bytes.isNameByte(input[index - 1]) || input[index - 1] == UInt8(ascii: "%"))
            {
                if let next = credentialWord(at: index) ?? pair(at: index) ?? encodedWord(at: index) {
                    index = next
                    continue
                }
            }
            if byte == UInt8(ascii: ":"), let next = url(at: index) {
                index = next
                continue
            }
            output.append(byte)
            index += 1
        }
        return changed ? output : nil
    }

    // MARK: Strings and keys

    /// How many backslashes start at `index`.
    func backslashRun(at index: Int) -> Int {
        var end = index
        while end < input.count, input[end] == UInt8(ascii: "\\") { end += 1 }
        return end - index
    }

    /// The string at `index`, opened by `level` backslashes and a quote: where its content is,
    /// where it ends, and whether it is closed.
    func stringExtent(at index: Int, level: Int) -> (content: Range<Int>, end: Int, closed: Bool) {
        let start = index + level + 1
        var cursor = start
        if level == 0 {
            while cursor < input.count, input[cursor] != UInt8(ascii: "\"") {
                cursor += input[cursor] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard cursor < input.count else { return (start..<input.count, input.count, false) }
            return (start..<cursor, cursor + 1, true)
        }
        // Escaped inside other text: it ends at a quote after exactly `level` backslashes.
        var run = 0
        while cursor < input.count {
            // Its own backslashes before the quote come in groups of 2 (level + 1): a quote
            // after `\\\\\"` at level 1 ends a string whose text ends in a backslash.
            if input[cursor] == UInt8(ascii: "\""), run >= level, (run - level) % (2 * (level + 1)) == 0 {
                return (start..<(cursor - level), cursor + 1, true)
            }
            run = input[cursor] == UInt8(ascii: "\\") ? run + 1 : 0
            cursor += 1
        }
        return (start..<input.count, input.count, false)
    }

    /// A string, or a key and its value; returns where reading goes on.
    private mutating func string(at index: Int, level: Int) -> Int {
        let extent = stringExtent(at: index, level: level)
        var colon = extent.end
        while colon < input.count, Bytes.isSpace(input[colon]) { colon += 1 }
        if extent.closed, let separatorEnd = separatorEnd(at: colon) {
            let name = (level == 0 ? JSONText.decode(input[extent.content]) : Array(input[extent.content]))
                .filter { $0 != UInt8(ascii: "\\") }
            // Short keys only: a name or value key is a word.
            let lowered = name.count <= 8 ? name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } : []
            let namedSecret = secretValueFollows && Self.valueKeys.contains(lowered)
            let namesNext = Self.nameKeys.contains(lowered) && namesSecret(after: separatorEnd, level: level)
            if Self.nameKeys.contains(lowered) { secretValueFollows = namesNext }
            if pass.isSecret(name) || namedSecret {
                // `{"key": "X-Api-Key", "value": …}`: the label is hidden, and names the value.
                secretValueFollows = namesNext
                output += input[index..<separatorEnd]
                var valueStart = separatorEnd
                while valueStart < input.count, Bytes.isSpace(input[valueStart]) { valueStart += 1 }
                output += input[separatorEnd..<valueStart]
                writePlaceholder(quotedAt: level)
                return valueEnd(at: valueStart, level: level)
            }
        }
        writeString(at: index, level: level, extent: extent)
        return extent.end
    }

    /// Keys that name the value of another key in the same object, as HAR files, form field
    /// lists and environment lists write a pair: `{"name": "Authorization", "value": "…"}`.
    private static let nameKeys: Set<[UInt8]> = [
        Array("name".utf8), Array("key".utf8), Array("header".utf8), Array("field".utf8),
    ]
    /// The keys whose value such a name names.
    private static let valueKeys: Set<[UInt8]> = [Array("value".utf8), Array("val".utf8), Array("content".utf8)]

    /// Whether the value that starts after `start` (spaces skipped) is a string at `level`
    /// holding a secret name.
    private func namesSecret(after start: Int, level: Int) -> Bool {
        var index = start
        while index < input.count, Bytes.isSpace(input[index]) { index += 1 }
        guard index < input.count, backslashRun(at: index) == level, index + level < input.count,
            input[index + level] == UInt8(ascii: "\"")
        else { return false }
        let extent = stringExtent(at: index, level: level)
        let content = level == 0 ? JSONText.decode(input[extent.content]) : Array(input[extent.content])
        return content.count <= 128 && pass.isSecret(content.filter { $0 != UInt8(ascii: "\\") })
    }

    /// A string as it was, or its content redacted and escaped again as it was.
    private mutating func writeString(at index: Int, level: Int, extent: (content: Range<Int>, end: Int, closed: Bool))
    {
        let quote = input[index..<extent.content.lowerBound]
        if level == 0 {
            let decoded = JSONText.decode(input[extent.content])
            if let redacted = pass.value(decoded[...], depth: depth + 1) {
                let slashes = Bytes.contains(input[extent.content], Bytes.escapedSlash)
                output += quote
                JSONText.encode(redacted, escapingSlashes: slashes, into: &output)
                if extent.closed { output.append(UInt8(ascii: "\"")) }
                changed = true
                return
            }
        } else if let redacted = pass.value(input[extent.content], depth: depth + 1) {
            output += quote
            output += redacted
            output += input[extent.content.upperBound..<extent.end]
            changed = true
            return
        }
        output += input[index..<extent.end]
    }

    /// The placeholder as a string at `level` of escaping (`"<redacted>"`, `\"<redacted>\"`).
    private mutating func writePlaceholder(quotedAt level: Int) {
        let quote = Array(repeating: UInt8(ascii: "\\"), count: level) + [UInt8(ascii: "\"")]
        output += quote + RedactionPass.placeholder + quote
        changed = true
    }

    /// Where a value that starts at `start` ends: a string at `level`, an object or array to
    /// its closing bracket (or the end), a quoted word, or a bare word.
    func valueEnd(at start: Int, level: Int) -> Int {
        guard start < input.count else { return start }
        // Text redacted before stays as it is.
        let afterPlaceholder = start + RedactionPass.placeholder.count
        if Bytes.hasPrefix(input[start...], RedactionPass.placeholder),
            wordEnd(from: afterPlaceholder) == afterPlaceholder
        {
            return afterPlaceholder
        }
        let byte = input[start]
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            let run = backslashRun(at: start)
            if start + run < input.count, input[start + run] == UInt8(ascii: "\"") {
                return stringExtent(at: start, level: run).end
            }
        }
        if byte == UInt8(ascii: "'") {
            return (input[(start + 1)...].firstIndex(of: byte)).map { $0 + 1 } ?? input.count
        }
        if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "(") {
            return blockEnd(at: start, level: level)
        }
        let end = wordEnd(from: start)
        if end == start, !Self.endsValues(byte) {
            // A value that starts with what would end a word (`<p@ss>`, `\x`): to a space.
            return input[start...].firstIndex { Bytes.isSpace($0) || $0 == UInt8(ascii: "&") } ?? input.count
        }
        // A call or a wrapper around the secret (`Optional("…")`, `Some(…)`), or a word glued
        // to a quoted string (`b"…"`): the whole of it.
        if end > start, input[end - 1] == UInt8(ascii: "(") { return blockEnd(at: end - 1, level: level) }
        if end > start, end < input.count, input[end] == UInt8(ascii: "\"") || input[end] == UInt8(ascii: "'") {
            return valueEnd(at: end, level: level)
        }
        return end
    }

    /// Where the object, array or parenthesized block that opens at `start` closes (or the end),
    /// strings at `level` inside it skipped.
    func blockEnd(at start: Int, level: Int) -> Int {
        var nesting = 0
        var index = start
        while index < input.count {
            switch input[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("): nesting += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"):
                nesting -= 1
                if nesting == 0 { return index + 1 }
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                let run = backslashRun(at: index)
                if run == level, index + run < input.count, input[index + run] == UInt8(ascii: "\"") {
                    index = stringExtent(at: index, level: run).end
                    continue
                }
                index += max(run, 1)
                continue
            default: break
            }
            index += 1
        }
        return input.count
    }

    /// Whether a byte ends a value where it stands: a space or a separator of pairs and lists.
    private static func endsValues(_ byte: UInt8) -> Bool {
        Bytes.isSpace(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: ";")
            || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: ")")
    }

    /// Where the separator of a key and its value ends, when one starts at `index` (after
    /// spaces): `:` (JSON, YAML, headers), `=` (forms, Python and Swift descriptions) or `=>`
    /// (Ruby, PHP).
    func separatorEnd(at index: Int) -> Int? {
        guard index < input.count else { return nil }
        if input[index] == UInt8(ascii: ":") { return index + 1 }
        guard input[index] == UInt8(ascii: "=") else { return nil }
        return index + 1 < input.count && input[index + 1] == UInt8(ascii: ">") ? index + 2 : index + 1
    }

    /// The end of a bare word: at a space, a quote, a backslash or punctuation that ends
    /// values (`,`, `;`, `&`, brackets, `<`, `>`).
    func wordEnd(from start: Int) -> Int {
        input[start...].firstIndex { byte in
            Bytes.isSpace(byte)
                || [
                    UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: ";"),
                    UInt8(ascii: "&"), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"), UInt8(ascii: "<"),
                    UInt8(ascii: ">"),
                ].contains(byte)
        } ?? input.count
    }
}
