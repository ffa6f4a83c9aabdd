/// SHA-1 (FIPS 180-4), in pure Swift.
///
/// **Not for signing.** SHA-1 is broken for collision resistance. It is here because the
/// WebSocket opening handshake (RFC 6455) proves the server read the client's key with it.
package struct SHA1: BlockHash {
    typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32)
    static let initialState: State = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0)
    static let bigEndianLength = true
    var state = initialState
    var buffer = BlockBuffer()

    /// Creates a hash with no input yet.
    package init() {}

    static func digest(of state: State) -> [UInt8] {
        let words: [UInt32] = [state.0, state.1, state.2, state.3, state.4]
        return words.flatMap(\.bigEndianBytes)
    }

    static func compress(_ state: inout State, _ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            loadBigEndianWords(of: block, into: w)
            for i in 16..<80 {
                w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotatedLeft(1)
            }
            var (a, b, c, d, e) = state
            for i in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch i {
                case 0..<20:
                    f = (b & c) | (~b & d)
                    k = 0x5a82_7999
                case 20..<40:
                    f = b ^ c ^ d
                    k = 0x6ed9_eba1
                case 40..<60:
                    f = (b & c) | (b & d) | (c & d)
                    k = 0x8f1b_bcdc
                default:
                    f = b ^ c ^ d
                    k = 0xca62_c1d6
                }
                let next = a.rotatedLeft(5) &+ f &+ e &+ k &+ w[i]
                e = d
                d = c
                c = b.rotatedLeft(30)
                b = a
                a = next
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
        }
    }
}
