import Foundation

/// How a transport checks the server's TLS certificate. Validation is always on; these options
/// only narrow what is trusted.
///
/// ```swift
/// var tls = TLSOptions()
/// tls.certificateAuthorities = Bundle.main.url(forResource: "company-ca", withExtension: "pem")
/// tls.pinnedPublicKeys = ["Ct0t2…base64 SHA-256 of the SPKI…="]
/// let transport = CurlTransport(options: .init(tls: tls))
/// ```
///
/// A pin is the base64 SHA-256 of the server certificate's SubjectPublicKeyInfo (DER), as
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256
/// -binary | base64` prints it. With pins set, a certificate chain that validates but whose
/// leaf key matches no pin is refused.
public struct TLSOptions: Sendable, Hashable {
    /// A PEM file of certificate authorities trusted instead of the system's bundle, or `nil`
    /// for the system's.
    public var certificateAuthorities: URL?
    /// Base64 SHA-256 digests of the public keys (SPKI) a server may present; empty for no
    /// pinning.
    public var pinnedPublicKeys: [String]

    /// Creates options: the system's authorities and no pins by default.
    /// - Parameters:
    ///   - certificateAuthorities: A PEM file of trusted authorities, or `nil`.
    ///   - pinnedPublicKeys: Base64 SHA-256 digests of allowed public keys.
    public init(certificateAuthorities: URL? = nil, pinnedPublicKeys: [String] = []) {
        self.certificateAuthorities = certificateAuthorities
        self.pinnedPublicKeys = pinnedPublicKeys
    }
}
