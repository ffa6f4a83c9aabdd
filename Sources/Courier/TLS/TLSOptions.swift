import Foundation

/// How a transport checks the server's TLS certificate. Validation is always on; these options
/// only narrow what is trusted.
///
/// ```swift
/// var tls = TLSOptions()
/// tls.certificateAuthorities = Bundle.main.url(forResource: "company-ca", withExtension: "pem")
/// tls.pinnedPublicKeys = [
///     "api.example.com": [currentPin, nextPin],
///     "*.payments.example.com": [paymentsPin],
/// ]
/// let transport = CurlTransport(options: .init(tls: tls))
/// ```
///
/// A pin is the base64 SHA-256 of the server certificate's SubjectPublicKeyInfo (DER), as
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256
/// -binary | base64` prints it; RSA and elliptic-curve (P-256, P-384, P-521) keys of any size
/// can be pinned. Pins are per host, so an absolute URL to a host you did not pin (a CDN, say)
/// still works. With pins for a host, a certificate chain that validates but whose leaf key
/// matches none of them is refused.
public struct TLSOptions: Sendable, Hashable {
    /// A PEM file of certificate authorities trusted instead of the system's bundle, or `nil`
    /// for the system's.
    public var certificateAuthorities: URL?
    /// Base64 SHA-256 digests of the public keys (SPKI) a server may present, by host pattern;
    /// empty for no pinning.
    ///
    /// A pattern is a host name (`api.example.com`, matched without regard to case), `*.`
    /// and a domain (`*.example.com`: every name below it, at any depth, but not
    /// `example.com` itself), or `*` (every host). A host takes the pins of its most specific
    /// pattern: its own name, else the longest matching domain, else `*`. A host no pattern
    /// matches is not pinned, and neither is one whose pattern has an empty list, which
    /// exempts it from a broader pattern. A malformed pattern fails every request with
    /// ``NetworkError/Code/invalidRequest``.
    public var pinnedPublicKeys: [String: [String]]

    /// Creates options: the system's authorities and no pins by default.
    /// - Parameters:
    ///   - certificateAuthorities: A PEM file of trusted authorities, or `nil`.
    ///   - pinnedPublicKeys: Base64 SHA-256 digests of allowed public keys, by host pattern.
    public init(certificateAuthorities: URL? = nil, pinnedPublicKeys: [String: [String]] = [:]) {
        self.certificateAuthorities = certificateAuthorities
        self.pinnedPublicKeys = pinnedPublicKeys
    }

    /// The pins a server must match to serve `host`: empty when the host is not pinned.
    /// - Parameter host: The host of the request's URL.
    /// - Returns: The pins of the host's most specific pattern, or an empty array.
    /// - Throws: ``NetworkError`` (``NetworkError/Code/invalidRequest``) when a pattern is
    ///   malformed.
    public func pins(for host: String) throws(NetworkError) -> [String] {
        guard !pinnedPublicKeys.isEmpty else { return [] }
        let name = Self.normalized(host)
        var best: (specificity: Int, pins: [String])?
        for (pattern, pins) in pinnedPublicKeys {
            let specificity = try Self.specificity(of: pattern, matching: name)
            if let specificity, specificity > best?.specificity ?? -1 { best = (specificity, pins) }
        }
        return best?.pins ?? []
    }

    /// How specifically `pattern` matches `host`, or `nil` when it does not: `*` is 0, a domain
    /// pattern its length, a host name above every domain.
    private static func specificity(of pattern: String, matching host: String) throws(NetworkError) -> Int? {
        if pattern == "*" { return 0 }
        let pattern = normalized(pattern)
        let domain = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-.:_")
        guard !domain.isEmpty, domain.allSatisfy(allowed.contains), !domain.hasPrefix("."),
            !domain.contains("..")
        else {
            throw NetworkError(
                .invalidRequest,
                "The TLS pin pattern \"\(pattern)\" is not a host name, \"*.\" and a domain, or \"*\".")
        }
        if domain == pattern { return host == pattern ? Int.max : nil }
        return host.hasSuffix("." + domain) ? domain.count : nil
    }

    /// Lowercased, without the brackets of an IPv6 literal or a final dot.
    private static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix("."), name.count > 1 { name.removeLast() }
        return name
    }
}
