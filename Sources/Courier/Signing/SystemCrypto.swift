import Foundation

#if canImport(CommonCrypto)
    import CommonCrypto
#elseif canImport(Glibc)
    import Glibc
#endif

/// The system's SHA-256, HMAC-SHA256, MD5 and random bytes: CommonCrypto on Apple platforms (SHA-256 and HMAC;
/// its MD5 is deprecated there), libcrypto on Linux with Glibc, loaded at run time as libcurl is
/// (OpenSSL 3 or 1.1, when the machine has one). Each returns `nil` where there is none,
/// or for an input it cannot take (over 4 GB for CommonCrypto's SHA-256); the pure-Swift code is
/// then used, and is the reference the tests compare these with.
package enum SystemCrypto {
    /// Whether HMAC-SHA256 is built on libcrypto's streaming SHA-256 (Linux, not in FIPS mode).
    package static var hasStreamingSHA256: Bool {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            LibCrypto.shared?.streaming != nil
        #else
            false
        #endif
    }

    /// Whether a system implementation was found.
    package static var isAvailable: Bool {
        #if canImport(CommonCrypto)
            true
        #elseif canImport(Glibc)
            LibCrypto.shared != nil
        #else
            false
        #endif
    }

    package static func sha256(_ data: Data) -> [UInt8]? {
        #if canImport(CommonCrypto)
            guard let length = CC_LONG(exactly: data.count) else { return nil }
            var digest = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
            data.withNonNullBytes { bytes in _ = CC_SHA256(bytes, length, &digest) }
            return digest
        #elseif canImport(Glibc)
            guard let crypto = LibCrypto.shared else { return nil }
            var digest = [UInt8](repeating: 0, count: 32)
            let done = data.withNonNullBytes { bytes in crypto.sha256(bytes, data.count, &digest) != nil }
            return done ? digest : nil
        #else
            return nil
        #endif
    }

    /// - Parameter streaming: Whether HMAC may be built on libcrypto's streaming SHA-256 (Linux),
    ///   when it has one and is not in FIPS mode; `false` takes its one-shot `HMAC`.
    package static func hmacSHA256(key: Data, message: UnsafeRawBufferPointer, streaming: Bool = true) -> [UInt8]? {
        #if canImport(CommonCrypto)
            var code = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
            key.withNonNullBytes { keyBytes in
                message.withNonNullBytes { bytes in
                    CCHmac(CCHmacAlgorithm(kCCHmacAlgSHA256), keyBytes, key.count, bytes, message.count, &code)
                }
            }
            return code
        #elseif canImport(Glibc)
            guard let crypto = LibCrypto.shared else { return nil }
            if streaming, let streamingSHA256 = crypto.streaming {
                return streamingSHA256.hmac(key: key, message: message)
            }
            guard let keyLength = Int32(exactly: key.count), let sha256 = crypto.evpSHA256() else { return nil }
            var code = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            let done = key.withNonNullBytes { keyBytes in
                message.withNonNullBytes { bytes in
                    crypto.hmac(sha256, keyBytes, keyLength, bytes, message.count, &code, &length) != nil
                }
            }
            return done && length == 32 ? code : nil
        #else
            return nil
        #endif
    }

    /// `count` random bytes: libcrypto's generator where there is one (OpenSSL 1.1.1d or later: a
    /// generator that takes its entropy from the kernel and renews it, after a fork too, without
    /// a system call per draw), the standard generator otherwise (on Apple platforms it makes no system
    /// call either). A nonce needs them to be unique, not secret; a libcrypto configured with a
    /// random engine of its own uses that engine.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        libCryptoRandomBytes(count) ?? standardRandomBytes(count)
    }

    /// `count` bytes from libcrypto's `RAND_bytes`; `nil` without it.
    static func libCryptoRandomBytes(_ count: Int) -> [UInt8]? {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            guard let random = LibCrypto.shared?.random, let length = Int32(exactly: count) else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            return random(&bytes, length) == 1 ? bytes : nil
        #else
            return nil
        #endif
    }

    /// `count` bytes from the standard generator, drawn 64 bits at a time (on Linux each draw
    /// is a system call).
    static func standardRandomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    package static func md5(_ data: Data) -> [UInt8]? {
        #if canImport(Glibc) && !canImport(CommonCrypto)
            guard let crypto = LibCrypto.shared else { return nil }
            var digest = [UInt8](repeating: 0, count: 16)
            let done = data.withNonNullBytes { bytes in crypto.md5(bytes, data.count, &digest) != nil }
            return done ? digest : nil
        #else
            return nil
        #endif
    }
}

extension Data {
    /// Runs `body` with a pointer to the bytes that is never null (one to a zero byte when there
    /// are none), as C digest functions want.
    fileprivate func withNonNullBytes<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        withUnsafeBytes { $0.withNonNullBytes(body) }
    }
}

extension UnsafeRawBufferPointer {
    /// Runs `body` with a pointer to the bytes that is never null (one to a zero byte when there
    /// are none), as C digest functions want.
    fileprivate func withNonNullBytes<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        guard let base = baseAddress, !isEmpty else {
            var zero: UInt8 = 0
            return body(&zero)
        }
        return body(base.assumingMemoryBound(to: UInt8.self))
    }
}
