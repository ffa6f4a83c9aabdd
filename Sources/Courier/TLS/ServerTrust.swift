#if canImport(Security)
    import Foundation
    import Security

    /// ``TLSOptions`` for `URLSessionTransport` on Apple platforms, checked in the session
    /// delegate's server-trust challenge: the same rules as `CurlTransport` on Linux (custom
    /// authorities replace the system's; a host's pins are the base64 SHA-256 of the leaf's SPKI).
    ///
    /// This file is not compiled on Linux, where Courier is built and tested; it is kept small,
    /// and the SPKI it hashes is built by ``PublicKeyPin``, which the Linux tests check.
    enum ServerTrust {
        /// What a session delegate answers to `challenge` when it is about server trust, else
        /// `nil`: default handling when the options ask for nothing more than the system's
        /// evaluation, the trust as a credential when it passes them, and a cancel when it does
        /// not (`refused` is called first, to fail the request with ``untrusted``).
        static func answer(
            _ challenge: URLAuthenticationChallenge, options: TLSOptions, refused: () -> Void
        ) -> (disposition: URLSession.AuthChallengeDisposition, credential: URLCredential?)? {
            let space = challenge.protectionSpace
            guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust
            else { return nil }
            guard narrows(options, host: space.host) else { return (.performDefaultHandling, nil) }
            guard accepts(trust, host: space.host, options: options) else {
                refused()
                return (.cancelAuthenticationChallenge, nil)
            }
            return (.useCredential, URLCredential(trust: trust))
        }

        /// The error of a server whose trust ``answer(_:options:refused:)`` refused.
        static var untrusted: NetworkError {
            NetworkError(.tls, "The server's certificate or public key is not one the client trusts.")
        }

        /// Whether the options ask for more than the system's default evaluation of `host`.
        static func narrows(_ options: TLSOptions, host: String) -> Bool {
            guard options.certificateAuthorities == nil, let pins = try? options.pins(for: host) else { return true }
            return !pins.isEmpty
        }

        /// Whether `trust` for `host` passes system evaluation, the custom authorities and the
        /// host's pins. A malformed pin pattern never gets here (the transport refuses the
        /// request first); if one did, the trust would be refused.
        static func accepts(_ trust: SecTrust, host: String, options: TLSOptions) -> Bool {
            guard let pins = try? options.pins(for: host) else { return false }
            guard SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString)) == errSecSuccess else {
                return false
            }
            if let file = options.certificateAuthorities {
                let anchors = certificates(inPEM: file)
                guard !anchors.isEmpty, SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                    SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess
                else { return false }
            }
            guard SecTrustEvaluateWithError(trust, nil) else { return false }
            guard !pins.isEmpty else { return true }
            guard let leaf = (SecTrustCopyCertificateChain(trust) as? [SecCertificate])?.first,
                let key = SecCertificateCopyKey(leaf), let pin = pin(of: key)
            else { return false }
            return pins.contains(pin)
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

        /// The pin of a certificate's key: Security gives the bare key (PKCS #1 for RSA, an
        /// X9.63 point for elliptic curves), which ``PublicKeyPin`` wraps in its SPKI.
        private static func pin(of key: SecKey) -> String? {
            guard let attributes = SecKeyCopyAttributes(key) as? [CFString: Any],
                let type = attributes[kSecAttrKeyType] as? String, let bits = attributes[kSecAttrKeySizeInBits] as? Int,
                let algorithm = PublicKeyPin.Algorithm(
                    isRSA: type == (kSecAttrKeyTypeRSA as String),
                    isEllipticCurve: type == (kSecAttrKeyTypeECSECPrimeRandom as String), bits: bits),
                let raw = SecKeyCopyExternalRepresentation(key, nil) as Data?
            else { return nil }
            return PublicKeyPin.pin(of: raw, algorithm: algorithm)
        }
    }
#endif
