/// Checks UTF-8 (RFC 3629) as it arrives, piece by piece: a WebSocket text message may be cut
/// into fragments anywhere, even inside a character, and an invalid byte must fail the message
/// as soon as it arrives, not when the message ends.
///
/// Rejects what `String(decoding:as:)` would silently replace: overlong forms (`C0 80`), UTF-16
/// surrogates (`ED A0 80`), code points past U+10FFFF (`F4 90 80 80`) and the bytes that never
/// occur (`C0`, `C1`, `F5`–`FF`).
package struct UTF8Validation: Sendable, Equatable {
    /// How many continuation bytes the character under way still needs.
    private var pending = 0
    /// The range its next byte must be in (narrower than `80`–`BF` only right after some lead
    /// bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// A validation at the start of a text.
    package init() {}

    /// Whether the bytes so far end on a whole character.
    package var isComplete: Bool { pending == 0 }

    /// Checks the next bytes.
    /// - Parameter bytes: The next piece of the text.
    /// - Returns: `false` once a byte cannot be part of valid UTF-8 (the validation is then
    ///   spent: the text is invalid whatever follows).
    package mutating func consume(_ bytes: some Sequence<UInt8>) -> Bool {
        guard lower <= upper else { return false }  // failed before
        for byte in bytes {
            if pending > 0 {
                guard byte >= lower, byte <= upper else { return fail() }
                pending -= 1
                lower = 0x80
                upper = 0xBF
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: pending = 1
            case 0xE0: (pending, lower) = (2, 0xA0)  // no overlong three-byte forms
            case 0xE1...0xEC, 0xEE...0xEF: pending = 2
            case 0xED: (pending, upper) = (2, 0x9F)  // no surrogates
            case 0xF0: (pending, lower) = (3, 0x90)  // no overlong four-byte forms
            case 0xF1...0xF3: pending = 3
            case 0xF4: (pending, upper) = (3, 0x8F)  // nothing past U+10FFFF
            default: return fail()
            }
        }
        return true
    }

    private mutating func fail() -> Bool {
        // Past any lead byte: every later byte fails too.
        pending = 1
        lower = 1
        upper = 0
        return false
    }
}
