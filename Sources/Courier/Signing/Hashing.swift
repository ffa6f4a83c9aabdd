import Foundation

#if canImport(CommonCrypto)
    import CommonCrypto
#elseif canImport(Glibc)
    import Glibc
#endif

/// SHA-256, HMAC-SHA256 and MD5 as signing uses them: the system's implementation where there is
/// one (``SystemCrypto``), the pure-Swift code otherwise.
package enum Hashing {
    /// The SHA-256 digest of `data`.
    package static func sha256(_ data: Data) -> [UInt8] { SystemCrypto.sha256(data) ?? SHA256.hash(data) }

    /// The HMAC-SHA256 of `message` under `key`.
    package static func hmacSHA256(key: Data, message: UnsafeRawBufferPointer) -> [UInt8] {
        SystemCrypto.hmacSHA256(key: key, message: message) ?? HMAC<SHA256>.authenticationCode(for: message, key: key)
    }

    /// HMAC-SHA256 under `key`, ready for many messages.
    package static func hmacSHA256(key: Data) -> HMACSHA256Key { HMACSHA256Key(key) }

    /// The MD5 digest of `data` (legacy signing only).
    package static func md5(_ data: Data) -> [UInt8] { SystemCrypto.md5(data) ?? MD5.hash(data) }
}

/// An HMAC-SHA256 key for many messages. On libcrypto's streaming SHA-256 the padded key's two
/// blocks are hashed once, on the first message, instead of for every message; elsewhere each
/// message takes the whole HMAC. The key itself is kept as given; the two hash states made from
/// it (as good as the key for making codes) are wiped when this goes.
package final class HMACSHA256Key: @unchecked Sendable {
    private let key: Data
    #if canImport(Glibc) && !canImport(CommonCrypto)
        /// libcrypto's streaming SHA-256 and the hash states after the inner and after the
        /// outer padded key.
        private typealias Prepared = (streaming: StreamingSHA256, states: UnsafeMutableRawPointer)
        /// Guards `prepared` and `isMade`: the states are made on the first message, not sooner,
        /// so that libcrypto is not loaded while a client is still being configured, before
        /// libcurl brings its own.
        private let lock = NSLock()
        private var prepared: Prepared?
        /// Whether `prepared` was made (it stays `nil` without the streaming functions).
        private var isMade = false
    #endif

    init(_ key: Data) { self.key = key }

    deinit {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            if let prepared { StreamingSHA256.wipe(prepared.states) }
        #endif
    }

    /// Whether codes are made from the prepared hash states (libcrypto's streaming SHA-256).
    package var isPrepared: Bool {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            preparedStates() != nil
        #else
            false
        #endif
    }

    /// The authentication code of `message`.
    package func code(for message: UnsafeRawBufferPointer) -> [UInt8] {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            if let prepared = preparedStates(),
                let code = prepared.streaming.code(states: prepared.states, message: message)
            {
                return code
            }
        #endif
        return Hashing.hmacSHA256(key: key, message: message)
    }

    #if canImport(Glibc) && !canImport(CommonCrypto)
        /// The prepared states, made the first time they are asked for.
        private func preparedStates() -> Prepared? {
            lock.withLock {
                if isMade { return prepared }
                isMade = true
                prepared = LibCrypto.shared?.streaming.flatMap { streaming in
                    let states = UnsafeMutableRawPointer.allocate(
                        byteCount: StreamingSHA256.statesSize, alignment: StreamingSHA256.alignment)
                    states.initializeMemory(as: UInt8.self, repeating: 0, count: StreamingSHA256.statesSize)
                    guard key.withUnsafeBytes({ streaming.prepare(key: $0, into: states) }) else {
                        StreamingSHA256.wipe(states)
                        return nil
                    }
                    return (streaming, states)
                }
                return prepared
            }
        }
    #endif
}
