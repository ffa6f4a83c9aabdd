import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a transport checks the server's TLS certificate. Validation is always on; these options
/// only narrow what is trusted.
///
/// ```swift
/// var tls = TLSOptions()
/// tls.certificateAuthorities = Bundle.main.url(forResource: "company-ca", withExtension: "pem")
/// tls.pinnedPublicKeys = [
///     "api.example.com": [currentPin, nextPin],
///     "*.pay.example.com": [payPin],
/// ]
/// let transport = try CurlTransport(options: .init(tls: tls))
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
    ///   malformed, two patterns name the same hosts, or, with any pins set, the host is
    ///   spelled so that a pattern could miss it although the connection goes to a pinned
    ///   host: percent-encoded or non-ASCII, with an empty label, or an IPv4 address in another
    ///   form than four decimal numbers (`127.1`, `0x7f.0.0.1`).
    public func pins(for host: String) throws(NetworkError) -> [String] {
        guard !pinnedPublicKeys.isEmpty else { return [] }
        guard let name = Self.canonical(host) else {
            throw NetworkError(
                .invalidRequest,
                "The host \"\(host)\" is spelled so that its TLS pins could be missed; write it as a plain name.")
        }
        var patterns: Set<String> = []
        var best: (specificity: Int, pins: [String])?
        for (pattern, pins) in pinnedPublicKeys {
            let (key, specificity) = try Self.match(pattern, host: name)
            guard patterns.insert(key).inserted else {
                throw NetworkError(
                    .invalidRequest, "Two TLS pin patterns name \"\(key)\"; give those hosts one list of pins.")
            }
            if let specificity, specificity > best?.specificity ?? -1 { best = (specificity, pins) }
        }
        return best?.pins ?? []
    }

    /// A pattern in canonical form, and how specifically it matches `host` (`nil` when it does
    /// not): `*` is 0, a domain pattern its length, a host name above every domain.
    private static func match(_ pattern: String, host: String) throws(NetworkError) -> (String, Int?) {
        if pattern == "*" { return ("*", 0) }
        let wildcard = pattern.hasPrefix("*.")
        guard let domain = canonical(wildcard ? String(pattern.dropFirst(2)) : pattern), !domain.isEmpty else {
            throw NetworkError(
                .invalidRequest,
                "The TLS pin pattern \"\(pattern)\" is not a host name, \"*.\" and a domain, or \"*\".")
        }
        guard wildcard else { return (domain, host == domain ? Int.max : nil) }
        return ("*." + domain, host.hasSuffix("." + domain) ? domain.count : nil)
    }

    private static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-_")

    /// A host name lowercased without a final dot, or an IP address in its one canonical
    /// spelling; `nil` for a spelling that a transport could read as another host than a
    /// pattern does.
    static func canonical(_ host: String) -> String? {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.contains(":") { return canonicalIPv6(name) }
        if name.hasSuffix(".") { name.removeLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy(nameCharacters.contains) }) else {
            return nil
        }
        // A name whose last label is a number is an IPv4 address to libcurl and to URL
        // parsers, in many spellings: only the dotted decimal one is accepted.
        guard let last = labels.last, last.first?.isNumber == true else { return name }
        let numbers = labels.compactMap { label in
            label.count <= 3 && (label == "0" || label.first != "0") ? UInt8(label) : nil
        }
        return labels.count == 4 && numbers.count == 4 ? name : nil
    }

    private static func canonicalIPv6(_ address: String) -> String? {
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return nil }
        var text = [CChar](repeating: 0, count: 64)
        guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
