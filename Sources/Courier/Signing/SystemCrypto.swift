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

#if canImport(Glibc) && !canImport(CommonCrypto)
    /// libcrypto's one-shot digest functions, looked up once.
    private struct LibCrypto: @unchecked Sendable {
        typealias Digest =
            @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) ->
            UnsafeMutablePointer<UInt8>?
        typealias MessageDigest = @convention(c) () -> OpaquePointer?
        typealias Random = @convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32
        typealias Authenticate =
            @convention(c) (
                OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?,
                UnsafeMutablePointer<UInt32>?
            ) -> UnsafeMutablePointer<UInt8>?

        let sha256: Digest
        let md5: Digest
        let evpSHA256: MessageDigest
        let hmac: Authenticate
        /// `RAND_bytes`, if this libcrypto has it.
        let random: Random?
        /// SHA-256 a piece at a time, if this libcrypto has it (not built without deprecated
        /// functions): HMAC built on it skips the algorithm lookup and the allocations that
        /// OpenSSL 3's one-shot `HMAC` makes on every call, a third of the cost of signing a
        /// request.
        let streaming: StreamingSHA256?

        /// `nil` when no libcrypto with these functions can be loaded.
        static let shared: LibCrypto? = {
            // One already loaded (libcurl's) first, so the process does not hold two.
            let names = ["libcrypto.so.3", "libcrypto.so.1.1"]
            guard
                let library = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) }).first
                    ?? names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first
            else { return nil }
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                dlsym(library, name).map { unsafeBitCast($0, to: type) }
            }
            guard let sha256 = symbol("SHA256", as: Digest.self), let md5 = symbol("MD5", as: Digest.self),
                let evpSHA256 = symbol("EVP_sha256", as: MessageDigest.self),
                let hmac = symbol("HMAC", as: Authenticate.self)
            else { return nil }
            // Before 1.1.1d the generator did not renew its entropy after a fork: two processes
            // could draw the same nonces.
            typealias Version = @convention(c) () -> UInt
            let version = symbol("OpenSSL_version_num", as: Version.self)?() ?? 0
            let random = version >= 0x1010_104F ? symbol("RAND_bytes", as: Random.self) : nil
            // In FIPS mode digests must come from the FIPS provider, which the one-shot `HMAC`
            // goes through and the streaming functions do not.
            // OpenSSL 3 asks its default properties; 1.1 builds with FIPS support have `FIPS_mode`.
            typealias FIPSMode = @convention(c) (OpaquePointer?) -> Int32
            typealias LegacyFIPSMode = @convention(c) () -> Int32
            let fips =
                symbol("EVP_default_properties_is_fips_enabled", as: FIPSMode.self)?(nil)
                ?? symbol("FIPS_mode", as: LegacyFIPSMode.self)?() ?? 0
            var streaming: StreamingSHA256?
            if fips == 0, let start = symbol("SHA256_Init", as: StreamingSHA256.Start.self),
                let update = symbol("SHA256_Update", as: StreamingSHA256.Update.self),
                let finish = symbol("SHA256_Final", as: StreamingSHA256.Finish.self)
            {
                streaming = StreamingSHA256(start: start, update: update, finish: finish)
            }
            return LibCrypto(
                sha256: sha256, md5: md5, evpSHA256: evpSHA256, hmac: hmac, random: random, streaming: streaming)
        }()
    }

    /// libcrypto's `SHA256_Init`, `SHA256_Update` and `SHA256_Final`, and HMAC-SHA256 (RFC 2104)
    /// built on them.
    private struct StreamingSHA256 {
        typealias Start = @convention(c) (UnsafeMutableRawPointer?) -> Int32
        typealias Update = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> Int32
        typealias Finish = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutableRawPointer?) -> Int32

        let start: Start
        let update: Update
        let finish: Finish

        /// Room for a `SHA256_CTX` (112 bytes in OpenSSL 1.1 and 3) with a margin.
        static var contextSize: Int { 256 }
        /// Room for the two states ``prepare(key:into:)`` writes.
        static var statesSize: Int { 2 * contextSize }
        static var alignment: Int { 16 }

        /// HMAC-SHA256 (RFC 2104) of `message` under `key`; `nil` if libcrypto reports a failure.
        func hmac(key: Data, message: UnsafeRawBufferPointer) -> [UInt8]? {
            withUnsafeTemporaryAllocation(byteCount: Self.statesSize, alignment: Self.alignment) { states in
                let states = states.baseAddress!
                defer { explicit_bzero(states, Self.statesSize) }
                guard key.withUnsafeBytes({ prepare(key: $0, into: states) }) else { return nil }
                return code(states: states, message: message)
            }
        }

        /// Writes into `states` (``statesSize`` bytes) the hash states after the inner padded key
        /// and after the outer one, which every code under `key` starts from; `false` if
        /// libcrypto reports a failure. The padded key is wiped before it returns.
        func prepare(key: UnsafeRawBufferPointer, into states: UnsafeMutableRawPointer) -> Bool {
            let blockSize = 64
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: blockSize) { pad in
                let pad = pad.baseAddress!
                defer { explicit_bzero(pad, blockSize) }
                // A key longer than the block is hashed first; the block-sized key is padded
                // with zeros.
                memset(pad, 0, blockSize)
                if key.count > blockSize {
                    guard start(states) == 1, update(states, key.baseAddress, key.count) == 1, finish(pad, states) == 1
                    else { return false }
                } else if let source = key.baseAddress {
                    memcpy(pad, source, key.count)
                }
                let inner = states
                let outer = states + Self.contextSize
                for index in 0..<blockSize { pad[index] ^= 0x36 }
                guard start(inner) == 1, update(inner, pad, blockSize) == 1 else { return false }
                for index in 0..<blockSize { pad[index] ^= 0x36 ^ 0x5c }
                return start(outer) == 1 && update(outer, pad, blockSize) == 1
            }
        }

        /// The code of `message` from the `states` ``prepare(key:into:)`` wrote, which are left
        /// as they are; `nil` if libcrypto reports a failure. The working state and the inner
        /// digest are wiped before it returns.
        func code(states: UnsafeRawPointer, message: UnsafeRawBufferPointer) -> [UInt8]? {
            let digestSize = 32
            return withUnsafeTemporaryAllocation(byteCount: Self.contextSize + digestSize, alignment: Self.alignment) {
                scratch in
                let context = scratch.baseAddress!
                defer { explicit_bzero(context, scratch.count) }
                let inner = (context + Self.contextSize).bindMemory(to: UInt8.self, capacity: digestSize)
                memcpy(context, states, Self.contextSize)
                let innerDone =
                    (message.isEmpty || update(context, message.baseAddress, message.count) == 1)
                    && finish(inner, context) == 1
                guard innerDone else { return nil }
                memcpy(context, states + Self.contextSize, Self.contextSize)
                var code = [UInt8](repeating: 0, count: digestSize)
                let outerDone = update(context, inner, digestSize) == 1 && finish(&code, context) == 1
                return outerDone ? code : nil
            }
        }

        /// Wipes and frees states made for ``prepare(key:into:)``.
        static func wipe(_ states: UnsafeMutableRawPointer) {
            explicit_bzero(states, statesSize)
            states.deallocate()
        }
    }
#endif
