import Foundation

/// HMAC (RFC 2104) over any ``HashFunction``:
/// `HMAC<SHA256>.authenticationCode(for: Data("message".utf8), key: Data("key".utf8))`.
package enum HMAC<Hash: HashFunction> {
    /// The authentication code of `message` under `key`.
    /// - Parameters:
    ///   - message: The message.
    ///   - key: The key; one longer than the block size is hashed first.
    /// - Returns: The code, as long as the hash's digest.
    package static func authenticationCode(for message: some DataProtocol, key: some DataProtocol) -> [UInt8] {
        var block = key.count > Hash.blockSize ? Hash.hash(key) : Array(key)
        block.append(contentsOf: repeatElement(0, count: Hash.blockSize - block.count))
        var inner = Hash()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = Hash()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
