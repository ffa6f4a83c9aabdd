import Foundation

#if canImport(Glibc) && !canImport(CommonCrypto)
    /// libcrypto's one-shot digest functions, looked up once.
    struct LibCrypto: @unchecked Sendable {
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
    struct StreamingSHA256 {
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
