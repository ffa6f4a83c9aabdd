#if canImport(Security)
    import Foundation
    import Security

    /// ``TLSOptions`` for `URLSessionTransport` on Apple platforms, checked in the session
    /// delegate's server-trust challenge: the same rules as `CurlTransport` on Linux (custom
    /// authorities replace the system's; a pin is the base64 SHA-256 of the leaf's SPKI).
    ///
    /// This file is not compiled on Linux, where Courier is built and tested; keep it small and
    /// in step with `CurlTransfer`'s use of `CAINFO` and `PINNEDPUBLICKEY`.
    enum ServerTrust {
        /// Whether `trust` for `host` passes system evaluation, the custom authorities and the pins.
        static func accepts(_ trust: SecTrust, host: String, options: TLSOptions) -> Bool {
            SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
            if let file = options.certificateAuthorities {
                let anchors = certificates(inPEM: file)
                guard !anchors.isEmpty else { return false }
                SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                SecTrustSetAnchorCertificatesOnly(trust, true)
            }
            guard SecTrustEvaluateWithError(trust, nil) else { return false }
            guard !options.pinnedPublicKeys.isEmpty else { return true }
            guard let leaf = (SecTrustCopyCertificateChain(trust) as? [SecCertificate])?.first,
                let key = SecCertificateCopyKey(leaf), let pin = spkiPin(of: key)
            else { return false }
            return options.pinnedPublicKeys.contains(pin)
        }

        /// The DER certificates of a PEM file.
        private static func certificates(inPEM file: URL) -> [SecCertificate] {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
            return text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().compactMap { block in
                let body = block.components(separatedBy: "-----END CERTIFICATE-----").first ?? ""
                guard let der = Data(base64Encoded: body, options: .ignoreUnknownCharacters) else { return nil }
                return SecCertificateCreateWithData(nil, der as CFData)
            }
        }

        /// The base64 SHA-256 of a key's SubjectPublicKeyInfo: Security gives the bare key, so the
        /// ASN.1 header of its algorithm and size is put back in front.
        private static func spkiPin(of key: SecKey) -> String? {
            guard let attributes = SecKeyCopyAttributes(key) as? [CFString: Any],
                let type = attributes[kSecAttrKeyType] as? String, let bits = attributes[kSecAttrKeySizeInBits] as? Int,
                let raw = SecKeyCopyExternalRepresentation(key, nil) as Data?,
                let header = spkiHeaders["\(type == (kSecAttrKeyTypeRSA as String) ? "rsa" : "ec")\(bits)"]
            else { return nil }
            return Data(SHA256.hash(header + raw)).base64EncodedString()
        }

        private static let spkiHeaders: [String: Data] = [
            "rsa2048": hex("30820122300d06092a864886f70d01010105000382010f00"),
            "rsa4096": hex("30820222300d06092a864886f70d01010105000382020f00"),
            "ec256": hex("3059301306072a8648ce3d020106082a8648ce3d030107034200"),
            "ec384": hex("3076301006072a8648ce3d020106052b81040022036200"),
        ]

        private static func hex(_ text: String) -> Data {
            var bytes = Data()
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                bytes.append(UInt8(text[index..<next], radix: 16)!)
                index = next
            }
            return bytes
        }
    }
#endif
