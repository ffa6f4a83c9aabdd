import Foundation

/// A public-key pin as ``TLSOptions`` names it: the base64 SHA-256 of the key's DER
/// SubjectPublicKeyInfo (SPKI).
///
/// libcurl computes it itself. Apple's Security framework gives only the bare key
/// (`SecKeyCopyExternalRepresentation`: an RSA key as a PKCS #1 `RSAPublicKey`, an elliptic-curve
/// key as an uncompressed ANSI X9.63 point), so `ServerTrust` rebuilds the SPKI around it here,
/// where the Linux tests check it against openssl for every key type.
enum PublicKeyPin {
    /// The key algorithms a TLS server certificate carries.
    enum Algorithm: Equatable {
        case rsa
        case ecP256
        case ecP384
        case ecP521

        /// The algorithm of a Security key's type and size, or `nil` for one that cannot be
        /// pinned (a key type TLS does not use).
        init?(isRSA: Bool, isEllipticCurve: Bool, bits: Int) {
            switch (isRSA, isEllipticCurve, bits) {
            case (true, false, _): self = .rsa
            case (false, true, 256): self = .ecP256
            case (false, true, 384): self = .ecP384
            case (false, true, 521): self = .ecP521
            default: return nil
            }
        }

        /// The DER AlgorithmIdentifier: rsaEncryption with NULL parameters, or id-ecPublicKey
        /// with the curve's object identifier (RFC 3279, RFC 5480).
        var identifier: [UInt8] {
            let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
            let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
            switch self {
            case .rsa: return PublicKeyPin.der(tag: 0x30, rsaEncryption)
            case .ecP256:
                return PublicKeyPin.der(
                    tag: 0x30, ecPublicKey + [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07])
            case .ecP384: return PublicKeyPin.der(tag: 0x30, ecPublicKey + [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22])
            case .ecP521: return PublicKeyPin.der(tag: 0x30, ecPublicKey + [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23])
            }
        }
    }

    /// The DER SubjectPublicKeyInfo of a bare key: `SEQUENCE { algorithm, BIT STRING key }`.
    /// Built from the key's own length, so any RSA size or exponent fits.
    static func subjectPublicKeyInfo(of key: some Collection<UInt8>, algorithm: Algorithm) -> [UInt8] {
        der(tag: 0x30, algorithm.identifier + der(tag: 0x03, [0x00] + key))
    }

    /// The pin of a bare key.
    static func pin(of key: some Collection<UInt8>, algorithm: Algorithm) -> String {
        Data(SHA256.hash(subjectPublicKeyInfo(of: key, algorithm: algorithm))).base64EncodedString()
    }

    /// A DER element: tag, definite length (short form below 128, long form above), content.
    static func der(tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var count = content.count
        if count < 0x80 {
            length = [UInt8(count)]
        } else {
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }
}
