import Courier
import Foundation
import Testing

/// UTF-8 checked piece by piece, as WebSocket text arrives (RFC 3629's table of well-formed
/// sequences).
@Suite struct UTF8ValidationTests {
    /// Whether `bytes` are valid, checked whole and then cut at every point (the same answer
    /// both ways).
    private func isValid(_ bytes: [UInt8]) -> Bool {
        var whole = UTF8Validation()
        let answer = whole.consume(bytes) && whole.isComplete
        for cut in 0...bytes.count {
            var pieces = UTF8Validation()
            let cutAnswer = pieces.consume(bytes[..<cut]) && pieces.consume(bytes[cut...]) && pieces.isComplete
            #expect(cutAnswer == answer, "cut after \(cut) of \(bytes)")
        }
        return answer
    }

    @Test(
        "well-formed text is valid, from ASCII to the last code point",
        arguments: [
            [], Array("Hello".utf8), Array("κόσμε".utf8), [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
            [0xF4, 0x8F, 0xBF, 0xBF], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xC2, 0x80],
        ] as [[UInt8]])
    func valid(_ bytes: [UInt8]) {
        #expect(isValid(bytes))
    }

    @Test(
        "overlong forms, surrogates, code points past U+10FFFF, stray and missing continuation bytes are not",
        arguments: [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], [0xBF], [0xE2, 0x82], [0xC2, 0x41], [0xCE, 0xBA, 0xE1],
        ] as [[UInt8]])
    func invalid(_ bytes: [UInt8]) {
        #expect(!isValid(bytes))
    }

    @Test(
        "every byte string of one and two bytes, and of three from E0 to EF, is judged as the standard library judges it"
    )
    func agreesWithStandardLibrary() {
        // The standard library replaces each invalid sequence with U+FFFD: bytes are valid when
        // they decode and encode back unchanged.
        func standard(_ bytes: [UInt8]) -> Bool { Array(String(decoding: bytes, as: UTF8.self).utf8) == bytes }
        func ours(_ bytes: [UInt8]) -> Bool {
            var validation = UTF8Validation()
            return validation.consume(bytes) && validation.isComplete
        }
        var inputs = (0...255).map { [UInt8($0)] }
        for first in 0...255 {
            for second in 0...255 { inputs.append([UInt8(first), UInt8(second)]) }
        }
        for first in 0xE0...0xEF {
            for second in 0x70...0xC5 {
                for third in [0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0] {
                    inputs.append([UInt8(first), UInt8(second), UInt8(third)])
                }
            }
        }
        let disagreements = inputs.filter { ours($0) != standard($0) }
        #expect(inputs.count == 256 + 65536 + 16 * 86 * 6)
        #expect(disagreements.isEmpty, "first disagreements: \(disagreements.prefix(5))")
    }

    @Test("once a byte fails, the validation stays failed whatever follows")
    func staysFailed() {
        var validation = UTF8Validation()
        let first = validation.consume([0xC0])
        let then = validation.consume(Array("ok".utf8))
        let nothing = validation.consume([])
        #expect(!first)
        #expect(!then)
        #expect(!nothing)
        #expect(!validation.isComplete)
    }
}
