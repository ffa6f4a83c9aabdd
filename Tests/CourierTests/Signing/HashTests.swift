import Courier
import Foundation
import Testing

/// SHA-256, SHA-1, MD5 and HMAC against the published vectors and against `openssl`.
@Suite struct HashTests {
    @Test(
        "SHA-256 matches the FIPS 180-4 examples",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func sha256(_ input: String, _ expected: String) {
        #expect(SHA256.hash(Data(input.utf8)).hexString == expected)
    }

    @Test("hex is the same for bytes held in one piece and for bytes a sequence yields one by one")
    func hex() {
        let bytes = (0...255).map { UInt8($0) }
        let expected = bytes.map { String(format: "%02x", $0) }.joined()
        #expect(bytes.hexString == expected)
        #expect(bytes.lazy.map { $0 }.hexString == expected, "a sequence without contiguous storage")
        #expect(bytes[16..<18].hexString == "1011", "a slice")
        #expect([UInt8]().hexString == "")
    }

    @Test(
        "SHA-256 and SHA-1 of a million 'a's, fed in uneven pieces",
        arguments: [
            ("SHA-256", "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
            ("SHA-1", "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
        ])
    func millionAs(_ name: String, _ expected: String) {
        func digest<Hash: HashFunction>(_: Hash.Type) -> String {
            var hash = Hash()
            let piece = Data(repeating: UInt8(ascii: "a"), count: 997)
            var fed = 0
            while fed < 1_000_000 {
                let count = min(piece.count, 1_000_000 - fed)
                hash.update(piece.prefix(count))
                fed += count
            }
            return hash.finalize().hexString
        }
        #expect((name == "SHA-1" ? digest(SHA1.self) : digest(SHA256.self)) == expected)
    }

    @Test(
        "SHA-1 matches the FIPS 180-4 examples",
        arguments: [
            ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ])
    func sha1(_ input: String, _ expected: String) {
        #expect(SHA1.hash(Data(input.utf8)).hexString == expected)
    }

    @Test(
        "MD5 matches the RFC 1321 test suite",
        arguments: [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
        ])
    func md5(_ input: String, _ expected: String) {
        #expect(MD5.hash(Data(input.utf8)).hexString == expected)
    }

    struct MACVector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let expected: String
        var testDescription: String { name }
    }

    static let rfc4231: [MACVector] = [
        .init(
            name: "RFC 4231 case 1", key: Array(repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            expected: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        .init(
            name: "RFC 4231 case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            expected: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        .init(
            name: "RFC 4231 case 3", key: Array(repeating: 0xaa, count: 20), data: Array(repeating: 0xdd, count: 50),
            expected: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        .init(
            name: "RFC 4231 case 6", key: Array(repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            expected: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        .init(
            name: "RFC 4231 case 7", key: Array(repeating: 0xaa, count: 131),
            data: Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8),
            expected: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("HMAC-SHA256 matches RFC 4231", arguments: rfc4231)
    func hmac(_ vector: MACVector) {
        #expect(HMAC<SHA256>.authenticationCode(for: vector.data, key: vector.key).hexString == vector.expected)
    }

    @Test("SHA-256, MD5 and HMAC-SHA256 agree with openssl on inputs of every length around the block edges")
    func crossCheckWithOpenSSL() async throws {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 4097] {
            let input = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let key = (0..<Int.random(in: 1...150, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            #expect(
                try await OpenSSL.digest(input, arguments: ["-sha256"]) == SHA256.hash(input).hexString,
                "length \(length)")
            #expect(
                try await OpenSSL.digest(input, arguments: ["-md5"]) == MD5.hash(input).hexString, "length \(length)")
            #expect(
                try await OpenSSL.digest(
                    input, arguments: ["-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(key.hexString)"])
                    == HMAC<SHA256>.authenticationCode(for: input, key: key).hexString, "length \(length)")
        }
    }
}
