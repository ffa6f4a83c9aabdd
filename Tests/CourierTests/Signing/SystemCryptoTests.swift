import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#endif

/// The system's digests (libcrypto here) against the pure-Swift reference, byte for byte.
@Suite struct SystemCryptoTests {
    static let lengths = [0, 1, 3, 55, 56, 63, 64, 65, 127, 128, 1000, 100_003]

    /// Whether this machine has a libcrypto Courier loads (OpenSSL 3 or 1.1).
    static let hasLibCrypto = ["libcrypto.so.3", "libcrypto.so.1.1"].contains { name in
        ["/usr/lib/x86_64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/usr/lib64/", "/usr/lib/"].contains {
            FileManager.default.fileExists(atPath: $0 + name)
        }
    }

    @Test("libcrypto is found on a Linux machine that has it", .enabled(if: hasLibCrypto))
    func available() {
        #expect(SystemCrypto.isAvailable)
        let fips = (try? String(contentsOfFile: "/proc/sys/crypto/fips_enabled", encoding: .utf8))?.hasPrefix("1")
        if fips != true { #expect(SystemCrypto.hasStreamingSHA256, "HMAC on the streaming SHA-256") }
    }

    @Test(
        "SHA-256, MD5 and HMAC-SHA256 agree with the pure-Swift code on every length and key size",
        .enabled(if: SystemCrypto.isAvailable))
    func agreeWithReference() throws {
        for length in Self.lengths {
            let data = patternedBytes(length, seed: UInt64(length) + 1)
            #expect(try #require(SystemCrypto.sha256(data)) == SHA256.hash(data), "SHA-256 of \(length) bytes")
            #if canImport(CommonCrypto)
                #expect(SystemCrypto.md5(data) == nil, "MD5 stays in Swift")
            #else
                #expect(try #require(SystemCrypto.md5(data)) == MD5.hash(data), "MD5 of \(length) bytes")
            #endif
            for keyLength in [0, 1, 32, 64, 65, 200] {
                let key = patternedBytes(keyLength, seed: UInt64(keyLength) + 99)
                let reference = HMAC<SHA256>.authenticationCode(for: data, key: key)
                let prepared = Hashing.hmacSHA256(key: key)
                for round in 1...2 {
                    #expect(
                        data.withUnsafeBytes { prepared.code(for: $0) } == reference,
                        "HMAC-SHA256 of \(length) bytes under a prepared \(keyLength)-byte key, round \(round)")
                }
                for streaming in [true, false] {
                    let system = try #require(
                        data.withUnsafeBytes { SystemCrypto.hmacSHA256(key: key, message: $0, streaming: streaming) })
                    #expect(
                        system == reference,
                        "HMAC-SHA256 of \(length) bytes under a \(keyLength)-byte key, streaming: \(streaming)")
                }
            }
        }
    }

    @Test(
        "a prepared key is prepared where libcrypto streams, and gives every task the same codes",
        .enabled(if: SystemCrypto.isAvailable))
    func preparedKeyConcurrently() async {
        let key = Hashing.hmacSHA256(key: Data("shared key".utf8))
        let messages = (0..<64).map { patternedBytes($0 * 37, seed: UInt64($0) + 7) }
        let expected = messages.map { HMAC<SHA256>.authenticationCode(for: $0, key: Data("shared key".utf8)) }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<50 {
                        let index = (task * 50 + round) % messages.count
                        if messages[index].withUnsafeBytes({ key.code(for: $0) }) != expected[index] { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(key.isPrepared == SystemCrypto.hasStreamingSHA256)
    }

    @Test("RFC 4231 test case 2 through the signing path")
    func rfc4231() {
        let code = Data("what do ya want for nothing?".utf8).withUnsafeBytes {
            Hashing.hmacSHA256(key: Data("Jefe".utf8), message: $0)
        }
        #expect(code.hexString == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}

/// The nonce the signing layer makes, and the random bytes behind it. One test at a time: the
/// fork test's child should not start while another test is inside libcrypto's generator.
@Suite(.serialized) struct NonceTests {
    /// The two sources of random bytes, as 16-byte nonces.
    static let sources: [(String, @Sendable () -> String?)] = [
        ("libcrypto", { SystemCrypto.libCryptoRandomBytes(16)?.hexString }),
        ("standard generator", { SystemCrypto.standardRandomBytes(16).hexString }),
        ("the signing layer's nonce", { SigningInterceptor.randomNonce() }),
    ]

    @Test("libcrypto's generator is used on a Linux machine that has it", .enabled(if: SystemCryptoTests.hasLibCrypto))
    func libCryptoAvailable() {
        #expect(SystemCrypto.libCryptoRandomBytes(16)?.count == 16)
        #expect(SystemCrypto.libCryptoRandomBytes(0) == [])
    }

    @Test("the standard generator gives any count of bytes, not only whole 64-bit draws")
    func standardCounts() {
        for count in [0, 1, 7, 8, 9, 16, 33] { #expect(SystemCrypto.standardRandomBytes(count).count == count) }
    }

    @Test(
        "a nonce is 32 lower-case hex digits, and 10,000 of them never repeat and use every digit",
        arguments: 0..<sources.count)
    func nonces(source: Int) throws {
        let (name, draw) = Self.sources[source]
        guard draw() != nil else { return }  // no libcrypto here: the test above says whether that is right
        let nonces = (0..<10_000).compactMap { _ in draw() }
        #expect(nonces.count == 10_000, "\(name)")
        #expect(nonces.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(Set(nonces).count == nonces.count, "\(name)")
        // The two 64-bit halves differ, and no half is one byte repeated.
        #expect(nonces.allSatisfy { $0.prefix(16) != $0.suffix(16) }, "\(name)")
        #expect(
            !nonces.contains { nonce in [nonce.prefix(16), nonce.suffix(16)].contains { Set($0.chunked2()).count == 1 }
            }, "\(name)")
        // Every position takes every digit: no byte is left constant.
        for position in 0..<32 {
            let digits = Set(nonces.map { $0[$0.index($0.startIndex, offsetBy: position)] })
            #expect(digits.count == 16, "\(name), position \(position)")
        }
    }
}

extension NonceTests {
    @Test("a pool's nonces never repeat, across the draws that refill it, whatever their size")
    func poolRefills() {
        let pool = RandomPool()
        // 10 does not divide the pool's size: each refill leaves a tail that is not handed out.
        let draws =
            (0..<(RandomPool.capacity / 16 * 3 + 1)).map { _ in pool.hexString(ofBytes: 16) }
            + (0..<(RandomPool.capacity / 10 * 2)).map { _ in pool.hexString(ofBytes: 10) }
        #expect(Set(draws).count == draws.count)
        #expect(draws.allSatisfy { $0.count == 32 || $0.count == 20 })
        #expect(pool.hexString(ofBytes: 0) == "")
        let whole = pool.hexString(ofBytes: RandomPool.capacity)
        #expect(whole.count == 2 * RandomPool.capacity, "a whole pool at once")
        #expect(Set(whole).count == 16)
    }

    #if canImport(Glibc)
        @Test("a forked process draws nonces of its own, not the ones its parent hands out next")
        func fork() throws {
            let pool = RandomPool.shared
            _ = pool.hexString(ofBytes: 16)  // the pool is full now, in the parent and in the child
            var pipe: [Int32] = [-1, -1]
            try #require(Glibc.pipe(&pipe) == 0)
            // Close-on-exec: no process another test spawns keeps the pipe open.
            for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            defer { close(pipe[0]) }
            let child = Glibc.fork()
            if child == 0 {
                // The child does no more than draw, answer and leave.
                let nonce = Array(pool.hexString(ofBytes: 16).utf8)
                _ = write(pipe[1], nonce, nonce.count)
                _exit(0)
            }
            close(pipe[1])
            try #require(child > 0, "fork failed")
            var answer = [UInt8](repeating: 0, count: 32)
            let count = Self.read(pipe[0], into: &answer, within: 20_000)
            if count != answer.count { kill(child, SIGKILL) }
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            try #require(count == answer.count, "the child answered within 20 s")
            #expect(status & 0x7F == 0 && (status >> 8) & 0xFF == 0, "the child exited normally")
            let childNonce = String(decoding: answer, as: UTF8.self)
            #expect(childNonce != pool.hexString(ofBytes: 16), "the child drew the parent's next bytes")
        }

        /// Reads up to `buffer.count` bytes from `descriptor`, waiting at most `milliseconds`
        /// for them to start; -1 when none came.
        private static func read(_ descriptor: Int32, into buffer: inout [UInt8], within milliseconds: Int32) -> Int {
            var reader = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&reader, 1, milliseconds) } while ready == -1 && errno == EINTR
            guard ready == 1 else { return -1 }
            return buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        }
    #endif
}

extension Substring {
    /// The text in pieces of two characters (a hex byte each).
    fileprivate func chunked2() -> [Substring] {
        stride(from: 0, to: count, by: 2).map {
            let start = index(startIndex, offsetBy: $0)
            return self[start..<index(start, offsetBy: 2)]
        }
    }
}
