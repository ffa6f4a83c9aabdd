import Foundation

/// A cryptographic hash written in pure Swift (Linux has no CryptoKit): ``SHA256`` and, for
/// legacy backends only, ``MD5`` (and ``SHA1``, for the WebSocket handshake). `SHA256.hash(Data("abc".utf8)).hexString` is
/// `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`.
package protocol HashFunction: Sendable {
    /// The size of the blocks the function consumes, in bytes (64 for SHA-256 and MD5).
    static var blockSize: Int { get }
    /// Creates a hash with no input yet.
    init()
    /// Adds bytes to the input.
    /// - Parameter bytes: The bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer)
    /// Returns the digest of all input so far.
    /// - Returns: The digest bytes.
    func finalize() -> [UInt8]
}

extension HashFunction {
    /// Adds bytes to the input.
    /// - Parameter data: The bytes.
    package mutating func update(_ data: some DataProtocol) {
        for region in data.regions { region.withUnsafeBytes { update($0) } }
    }

    /// The digest of `data`.
    /// - Parameter data: The input.
    /// - Returns: The digest bytes.
    package static func hash(_ data: some DataProtocol) -> [UInt8] {
        var function = Self()
        function.update(data)
        return function.finalize()
    }
}

/// A hash built from a 64-byte block compression function (SHA-256, MD5): the buffering,
/// padding and finalization are shared; each function supplies its state and compression.
protocol BlockHash: HashFunction {
    associatedtype State: Sendable
    /// The initial state.
    static var initialState: State { get }
    /// Whether the padded message length is big-endian (SHA-256) or little-endian (MD5).
    static var bigEndianLength: Bool { get }
    /// Mixes one 64-byte block into the state.
    static func compress(_ state: inout State, _ block: UnsafeRawBufferPointer)
    /// The digest bytes of a final state.
    static func digest(of state: State) -> [UInt8]
    var state: State { get set }
    var buffer: BlockBuffer { get set }
}

extension BlockHash {
    /// 64 bytes.
    package static var blockSize: Int { 64 }

    /// Adds bytes to the input.
    /// - Parameter bytes: The bytes.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var state = self.state
        buffer.append(bytes) { Self.compress(&state, $0) }
        self.state = state
    }

    /// Returns the digest of all input so far.
    /// - Returns: The digest.
    package func finalize() -> [UInt8] {
        var state = self.state
        buffer.padding(bigEndianLength: Self.bigEndianLength).withUnsafeBytes { tail in
            for offset in stride(from: 0, to: tail.count, by: 64) {
                Self.compress(&state, UnsafeRawBufferPointer(rebasing: tail[offset..<(offset + 64)]))
            }
        }
        return Self.digest(of: state)
    }
}

/// The Merkle–Damgård buffering that SHA-256 and MD5 share: collects input into 64-byte blocks
/// and pads the last one with the message length in bits.
struct BlockBuffer: Sendable {
    private(set) var pending: [UInt8] = []
    private(set) var byteCount: UInt64 = 0

    init() { pending.reserveCapacity(64) }

    /// Feeds bytes, calling `compress` for every complete 64-byte block.
    mutating func append(_ bytes: UnsafeRawBufferPointer, compress: (UnsafeRawBufferPointer) -> Void) {
        byteCount &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            offset = take
            if pending.count == 64 {
                pending.withUnsafeBytes(compress)
                pending.removeAll(keepingCapacity: true)
            }
        }
        while bytes.count - offset >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 64)]))
            offset += 64
        }
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    /// The final padded block or blocks: `0x80`, zeros, and the bit length (big- or little-endian).
    func padding(bigEndianLength: Bool) -> [UInt8] {
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bits = byteCount &* 8
        for index in 0..<8 {
            let shift = bigEndianLength ? UInt64(56 - 8 * index) : UInt64(8 * index)
            tail.append(UInt8(truncatingIfNeeded: bits >> shift))
        }
        return tail
    }
}

extension Sequence where Element == UInt8 {
    /// The bytes as lower-case hexadecimal.
    package var hexString: String {
        withContiguousStorageIfAvailable(lowerHex) ?? Array(self).withUnsafeBufferPointer(lowerHex)
    }
}

/// `bytes` as lower-case hexadecimal.
private func lowerHex(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { text in
        for (index, byte) in bytes.enumerated() {
            text[2 * index] = lowerHexDigit(byte >> 4)
            text[2 * index + 1] = lowerHexDigit(byte & 0x0F)
        }
        return bytes.count * 2
    }
}

/// The lower-case hex digit of a value below 16.
private func lowerHexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
}
