import Foundation

/// MD5 (RFC 1321), in pure Swift.
///
/// **Legacy.** MD5 is broken for collision resistance. It is here only because some app
/// backends still demand the "sorted parameters + key, MD5" signature; prefer ``SHA256`` with
/// ``HMAC`` wherever the backend allows.
package struct MD5: BlockHash {
    typealias State = (UInt32, UInt32, UInt32, UInt32)
    static let initialState: State = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    static let bigEndianLength = false
    var state = initialState
    var buffer = BlockBuffer()

    /// Creates a hash with no input yet.
    package init() {}

    static func digest(of state: State) -> [UInt8] {
        let words: [UInt32] = [state.0, state.1, state.2, state.3]
        return words.flatMap { $0.bigEndianBytes.reversed() }
    }

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// `floor(abs(sin(i + 1)) × 2^32)`, as RFC 1321 tabulates it.
    private static let constants: [UInt32] = (0..<64).map { index in
        UInt32((abs(sin(Double(index + 1))) * 4_294_967_296).rounded(.down))
    }

    static func compress(_ state: inout State, _ block: UnsafeRawBufferPointer) {
        var m = [UInt32](repeating: 0, count: 16)
        for i in 0..<16 {
            m[i] =
                UInt32(block[4 * i]) | UInt32(block[4 * i + 1]) << 8 | UInt32(block[4 * i + 2]) << 16
                | UInt32(block[4 * i + 3]) << 24
        }
        var (a, b, c, d) = state
        for i in 0..<64 {
            var f: UInt32
            let g: Int
            switch i {
            case 0..<16:
                f = (b & c) | (~b & d)
                g = i
            case 16..<32:
                f = (d & b) | (~d & c)
                g = (5 * i + 1) % 16
            case 32..<48:
                f = b ^ c ^ d
                g = (3 * i + 5) % 16
            default:
                f = c ^ (b | ~d)
                g = (7 * i) % 16
            }
            f = f &+ a &+ constants[i] &+ m[g]
            a = d
            d = c
            c = b
            b = b &+ f.rotatedLeft(shifts[i])
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
