/// The parts of ``TextScanner`` that read what a word starts: URLs, `name=value` and
/// `name: value` pairs, credentials without a name, elements, and percent-encoded words.
extension TextScanner {
    /// A URL whose `://` (or `:\/\/`) is at `index`, read to a space, a quote or an angle
    /// bracket. Its scheme, before `index`, is already written: whatever it is, what follows is
    /// an authority that may hold a user name and password.
    mutating func url(at index: Int) -> Int? {
        guard Bytes.schemeEnd(in: input[...], at: index) != nil else { return nil }
        var end = index
        while end < input.count {
            let byte = input[end]
            if Bytes.isSpace(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
                || byte == UInt8(ascii: "<")
                || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "`")
            {
                break
            }
            if byte == UInt8(ascii: "\\"), !(end + 1 < input.count && input[end + 1] == UInt8(ascii: "/")) { break }
            end += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        end = min(end, input.count)
        write(input[index..<end], redacted: pass.url(input[index..<end], depth: depth))
        return end
    }

    /// `name=value` or `name: value` at `index` (also `name => value`, and a name with its
    /// closing quote: `password': …`, or `password": …` where a stray quote earlier ran the
    /// quotes out of step): with a secret name, its value hidden; with another, a
    /// percent-encoded value read decoded.
    mutating func pair(at index: Int) -> Int? {
        var nameEnd = index
        while nameEnd < input.count, Bytes.isNameByte(input[nameEnd]) { nameEnd += 1 }
        guard nameEnd > index else { return nil }
        var separator = nameEnd
        var quoted = false
        if separator < input.count, input[separator] == UInt8(ascii: "'") {
            separator += 1
            quoted = true
        } else if separator < input.count,
            input[separator] == UInt8(ascii: "\"") || input[separator] == UInt8(ascii: "\\")
        {
            let run = backslashRun(at: separator)
            if separator + run < input.count, input[separator + run] == UInt8(ascii: "\"") {
                separator += run + 1
                quoted = true
            }
        }
        while separator < input.count, input[separator] == 0x20 || input[separator] == 0x09 { separator += 1 }
        // A secret name around its value, as Swift prints an enumeration's case: `.password("…")`.
        if !quoted, separator == nameEnd, separator < input.count, input[separator] == UInt8(ascii: "("),
            pass.isSecret(input[index..<nameEnd])
        {
            output += input[index...separator]
            output += RedactionPass.placeholder
            changed = true
            let end = blockEnd(at: separator, level: 0)
            if end > separator + 1, input[end - 1] == UInt8(ascii: ")") { output.append(input[end - 1]) }
            return end
        }
        guard let separatorEnd = separatorEnd(at: separator) else { return nil }
        let equals = input[separator] == UInt8(ascii: "=")
        guard pass.isSecret(input[index..<nameEnd]) else {
            guard equals, !quoted, separator == nameEnd, separatorEnd == separator + 1,
                let valueEnd = escapedWordEnd(from: separatorEnd)
            else { return nil }
            // Read decoded, once: what it holds unencoded it holds decoded too.
            output += input[index..<separatorEnd]
            write(input[separatorEnd..<valueEnd], redacted: pass.encoded(input[separatorEnd..<valueEnd], depth: depth))
            return valueEnd
        }
        var valueStart = separatorEnd
        while valueStart < input.count, input[valueStart] == 0x20 || input[valueStart] == 0x09 { valueStart += 1 }
        let end: Int
        if !equals, !quoted, startsLine(index) {
            // A header line: its value runs to the line's end.
            end = input[valueStart...].firstIndex { $0 == 0x0A || $0 == 0x0D } ?? input.count
        } else {
            // In a message for the app's user, `Invalid token: please log in again` keeps its
            // words: after a colon in a sentence, a plain word is prose, not a secret.
            if !equals, !quoted, pass.keepsProse, isProse(valueStart..<wordEnd(from: valueStart)) { return nil }
            end = quotedOrWordEnd(at: valueStart)
        }
        output += input[index..<valueStart]
        output += RedactionPass.placeholder
        changed = true
        return end
    }

    /// Whether only spaces, tabs and the arrows of a verbose dump (`> `, `< `) come before
    /// `index` on its line: a header line.
    private func startsLine(_ index: Int) -> Bool {
        var before = index
        while before > 0, input[before - 1] == 0x20 || input[before - 1] == 0x09 { before -= 1 }
        if before < index, before > 0, input[before - 1] == UInt8(ascii: ">") || input[before - 1] == UInt8(ascii: "<")
        {
            before -= 1
            while before > 0, input[before - 1] == 0x20 || input[before - 1] == 0x09 { before -= 1 }
        }
        return before == 0 || input[before - 1] == 0x0A || input[before - 1] == 0x0D
    }

    /// Whether a word reads as prose rather than as a secret: lower-case letters only, or a
    /// number of fewer than four digits.
    private func isProse(_ word: Range<Int>) -> Bool {
        guard !word.isEmpty else { return false }
        let bytes = input[word]
        return bytes.allSatisfy { $0 >= 0x61 && $0 <= 0x7A } || (bytes.count < 4 && bytes.allSatisfy(Bytes.isDigit))
    }

    /// A credential that needs no name: the word after `Bearer` or `Basic` (unless it is
    /// prose), and a JSON Web Token (`eyJ…` with two dots).
    mutating func credentialWord(at index: Int) -> Int? {
        var nameEnd = index
        while nameEnd < input.count, nameEnd - index <= 6, Bytes.isLetter(input[nameEnd]) { nameEnd += 1 }
        let name = input[index..<nameEnd].map { $0 | 0x20 }
        if name.elementsEqual("bearer".utf8) || name.elementsEqual("basic".utf8), nameEnd + 1 < input.count,
            input[nameEnd] == 0x20
        {
            let end = wordEnd(from: nameEnd + 1)
            guard end > nameEnd + 1, !(pass.keepsProse && isProse((nameEnd + 1)..<end)) else { return nil }
            output += input[index...nameEnd]
            output += RedactionPass.placeholder
            changed = true
            return end
        }
        guard Bytes.hasPrefix(input[index...], Array("eyJ".utf8)) else { return nil }
        // Its characters (base64url and dots) are name bytes, so no word starts among them and
        // each is read once.
        let end = input[index...].firstIndex { !Bytes.isJWTByte($0) } ?? input.count
        guard input[index..<end].filter({ $0 == UInt8(ascii: ".") }).count >= 2 else { return nil }
        output += RedactionPass.placeholder
        changed = true
        return end
    }

    /// The start of an XML or HTML element at `index` whose name is secret (`<Password>`,
    /// `<ns:Token a="1">`): its name is written, and its attributes are read as text; at the
    /// tag's end, its text is hidden, up to the next tag (see ``run()``).
    mutating func element(at index: Int) -> Int? {
        var nameEnd = index + 1
        while nameEnd < input.count,
            Bytes.isNameByte(input[nameEnd])
                || (input[nameEnd] == UInt8(ascii: ":") && nameEnd + 1 < input.count
                    && Bytes.isLetter(input[nameEnd + 1]))
        {
            nameEnd += 1
        }
        // A tag: its name, then its end or its attributes (`<token=…>` is no tag).
        guard nameEnd > index + 1, nameEnd < input.count,
            input[nameEnd] == UInt8(ascii: ">") || input[nameEnd] == UInt8(ascii: "/") || Bytes.isSpace(input[nameEnd]),
            pass.isSecret(input[(index + 1)..<nameEnd])
        else { return nil }
        output += input[index..<nameEnd]
        insideSecretTag = true
        return nameEnd
    }

    /// The end of a tag that ``element(at:)`` opened, at `index`: the element's text, up to the
    /// next tag, hidden (none follows `/>`).
    mutating func secretElementText(at index: Int) -> Int {
        insideSecretTag = false
        output.append(input[index])
        let end = input[(index + 1)...].firstIndex(of: UInt8(ascii: "<")) ?? input.count
        if end > index + 1, input[index - 1] != UInt8(ascii: "/") {
            output += RedactionPass.placeholder
            changed = true
            return end
        }
        return index + 1
    }

    /// The end of a quoted value (its quotes kept around the placeholder would mislead no
    /// one, so they go with it), or of a word, and of a second word after a scheme word
    /// (`Bearer abc`, `Basic abc`).
    private func quotedOrWordEnd(at start: Int) -> Int {
        let first = valueEnd(at: start, level: 0)
        guard first > start, input[start..<first].allSatisfy(Bytes.isLetter), first + 1 < input.count,
            input[first] == 0x20, !Bytes.isSpace(input[first + 1])
        else { return first }
        return valueEnd(at: first + 1, level: 0)
    }

    /// A percent-encoded word at `index`, decoded and read as a value.
    mutating func encodedWord(at index: Int) -> Int? {
        guard let end = escapedWordEnd(from: index) else { return nil }
        write(input[index..<end], redacted: pass.encoded(input[index..<end], depth: depth))
        return end
    }

    /// The end of the word at `start` when it holds a `%XX` escape and is no URL: a URL's
    /// query values are decoded one by one (by ``RedactionPass/url(_:depth:)``), never the
    /// URL whole, which would run their levels of encoding together.
    private mutating func escapedWordEnd(from start: Int) -> Int? {
        guard start >= plainWordEnd else { return nil }
        let end = wordEnd(from: start)
        let word = input[start..<end]
        guard PercentEncoding.hasEscape(word), !Bytes.contains(word, Bytes.schemeSeparator),
            !Bytes.contains(word, Bytes.escapedSchemeSeparator)
        else {
            plainWordEnd = end
            return nil
        }
        return end
    }

    private mutating func write(_ original: ArraySlice<UInt8>, redacted: [UInt8]?) {
        if let redacted {
            output += redacted
            changed = true
        } else {
            output += original
        }
    }
}
