import Foundation

/// The text a request signature is computed over. The format is part of Courier's contract with
/// backends; the "Signing requests" article spells out both versions with worked examples.
///
/// Version 2, the default, is nine lines joined with `\n`:
///
/// ```text
/// COURIER-V2 \n METHOD \n HOST \n PATH \n QUERY \n FORM \n BODY-SHA256 \n TIMESTAMP \n NONCE
/// ```
///
/// Version 1, for backends deployed before version 2, is six lines:
///
/// ```text
/// METHOD \n PATH \n SORTED-PARAMETERS \n TIMESTAMP \n NONCE \n BODY-SHA256
/// ```
///
/// - `HOST` (v2 only): ``host``, the lower-cased host name, with `:port` only when the port is not
///   the scheme's default (80 for `http`, 443 for `https`).
/// - `PATH`: ``path``, the URL path exactly as sent (percent-encoded, without `.` and `..`
///   segments), `/` when empty.
/// - `QUERY` and `FORM` (v2): ``sortedQuery`` and ``sortedForm``, the query parameters and the
///   form (or multipart text) fields kept apart, each list written `name=value` percent-encoded
///   by ``PercentEncoding``, sorted by bytes and joined with `&`. The signature parameter is
///   left out of both.
/// - `SORTED-PARAMETERS` (v1): ``sortedParameters``, the query and form parameters merged into one
///   such list, so moving a parameter between query and body does not change a v1 signature.
/// - `BODY-SHA256`: ``bodyHash``, the lower-case hex SHA-256 of a JSON or raw body; of no bytes
///   for no body, a form, a multipart form (its files are not signed) or a file body (not read
///   to sign it).
/// - `TIMESTAMP`: Unix time in whole seconds; `NONCE`: a value used once.
///
/// A backend verifies a request by building the canonical form from what it received:
///
/// ```swift
/// import CryptoKit  // or swift-crypto, on a Linux server
///
/// let canonical = CanonicalRequest(received, version: .v2, excluding: "sign", timestamp: timestamp, nonce: nonce)
/// let code = HMAC<SHA256>.authenticationCode(for: Data(canonical.string.utf8), using: SymmetricKey(data: secret))
/// let expected = code.map { String(format: "%02x", $0) }.joined()
/// ```
public struct CanonicalRequest: Sendable, Hashable {
    /// A version of the canonical form.
    ///
    /// ``v2`` covers the host and keeps the query apart from the body; ``v1`` is the earlier form,
    /// kept byte for byte so backends deployed against it keep verifying.
    public struct Version: Sendable, Hashable, CustomStringConvertible {
        let number: Int

        /// Six lines: method, path, query and form parameters merged, timestamp, nonce, body hash.
        public static let v1 = Version(number: 1)
        /// Nine lines: a `COURIER-V2` marker, method, host, path, query, form, body hash,
        /// timestamp, nonce.
        public static let v2 = Version(number: 2)

        /// `v1` or `v2`.
        public var description: String { "v\(number)" }
    }

    /// The version ``string`` is written in.
    public let version: Version
    /// The method token.
    public let method: String
    /// The lower-case host name, bracketed when it is an IPv6 address, followed by `:port` when
    /// the URL names a port other than its scheme's default. Signed by ``Version/v2`` only.
    public let host: String
    /// The percent-encoded path that goes on the wire.
    public let path: String
    /// The sorted, encoded query parameters joined with `&`. Signed by ``Version/v2``.
    public let sortedQuery: String
    /// The sorted, encoded form or multipart text fields joined with `&`. Signed by
    /// ``Version/v2``.
    public let sortedForm: String
    /// The query and form parameters together, sorted, encoded and joined with `&`. Signed by
    /// ``Version/v1`` and the legacy MD5 algorithm.
    public let sortedParameters: String
    /// The timestamp text.
    public let timestamp: String
    /// The nonce.
    public let nonce: String
    /// Lower-case hex SHA-256 of the body bytes.
    public let bodyHash: String

    /// Builds the canonical form of a request.
    /// - Parameters:
    ///   - request: The request, with every parameter in place.
    ///   - version: The version ``string`` is written in; it must be the one the request was
    ///     signed with.
    ///   - excluding: The name of the signature parameter, left out of the parameters.
    ///   - timestamp: The timestamp text.
    ///   - nonce: The nonce.
    public init(
        _ request: HTTPRequest, version: Version, excluding: String? = nil, timestamp: String, nonce: String
    ) {
        self.version = version
        method = request.method.rawValue
        host = Self.host(of: request.url)
        path = request.wirePath
        var form: [Parameters.Item] = []
        var body = Data()
        switch request.body {
        case .form(let fields): form = fields.items
        case .multipart(let multipart): form = multipart.fields.items
        case .json(let data), .data(let data, _): body = data
        case .none, .file: break
        }
        // Every parameter is encoded once into one buffer and the lot sorted once; each list
        // takes its pairs from there.
        let pairs = SortedPairs(query: request.query.items, form: form, excluding: excluding)
        sortedQuery = pairs.joined(inQuery: true)
        sortedForm = pairs.joined(inQuery: false)
        sortedParameters = form.isEmpty ? sortedQuery : pairs.joined(inQuery: nil)
        self.timestamp = timestamp
        self.nonce = nonce
        bodyHash = body.isEmpty ? Self.emptyBodyHash : Hashing.sha256(body).hexString
    }

    /// The lines of ``version`` joined with `\n` (no trailing newline): the text HMAC-SHA256 signs.
    public var string: String {
        let lines = self.lines
        return String(unsafeUninitializedCapacity: Self.joinedCount(lines)) { Self.join(lines, into: $0) }
    }

    /// Calls `body` with the UTF-8 bytes of ``string``, written once into memory that lasts
    /// only for the call.
    func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let lines = self.lines
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.joinedCount(lines)) { buffer in
            let count = Self.join(lines, into: buffer)
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<count]))
        }
    }

    /// The lines ``version`` signs, in order.
    private var lines: [String] {
        version == .v1
            ? [method, path, sortedParameters, timestamp, nonce, bodyHash]
            : ["COURIER-V2", method, host, path, sortedQuery, sortedForm, bodyHash, timestamp, nonce]
    }

    /// The bytes `lines` take joined with `\n`.
    private static func joinedCount(_ lines: [String]) -> Int {
        lines.reduce(lines.count - 1) { $0 + $1.utf8.count }
    }

    /// Writes `lines` joined with `\n` into `output`, which has room for ``joinedCount(_:)``
    /// bytes, and returns how many it wrote.
    private static func join(_ lines: [String], into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(output.count >= joinedCount(lines), "no room to join the lines")
        var count = 0
        for (index, var line) in lines.enumerated() {
            if index > 0 {
                output[count] = UInt8(ascii: "\n")
                count += 1
            }
            count += line.withUTF8 {
                UnsafeMutableBufferPointer(rebasing: output[count...]).initialize(fromContentsOf: $0)
            }
        }
        return count
    }

    /// The SHA-256 of no bytes, which most requests sign (no body, a form, a file).
    private static let emptyBodyHash = Hashing.sha256(Data()).hexString

    /// The `Host` header value libcurl sends for `url`, lower-cased: the port only when it is not
    /// the scheme's default, an IPv6 address in brackets.
    static func host(of url: URL) -> String {
        var text = url.absoluteString
        return text.withUTF8 { plainHost(in: $0) } ?? decodedHost(of: url)
    }

    /// ``host(of:)`` read straight from an `http(s)` URL's text when its authority is ASCII
    /// letters, digits, `-._~`, brackets and a port: what most URLs are, and what needs no
    /// decoding. `nil` for any other URL (a percent-escape, user info, text beyond ASCII).
    static func plainHost(in text: UnsafeBufferPointer<UInt8>) -> String? {
        let lower = { (byte: UInt8) in (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte }
        let schemeLength = text.firstIndex(of: UInt8(ascii: ":")) ?? text.count
        guard let defaultPort = defaultPort(ofScheme: text[..<schemeLength]) else { return nil }
        let start = schemeLength + 3
        guard text.count >= start, text[schemeLength + 1] == UInt8(ascii: "/"),
            text[schemeLength + 2] == UInt8(ascii: "/")
        else { return nil }
        let isEnd = { (byte: UInt8) in
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
        }
        let authority = text[start...].prefix { !isEnd($0) }
        let isHostByte = { (byte: UInt8) in
            switch lower(byte) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                true
            default: false
            }
        }
        // The host: a bracketed IPv6 address (letters, digits and colons inside), or a name.
        var hostEnd = authority.startIndex
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")),
                authority[(hostEnd + 1)..<close].allSatisfy({ isHostByte($0) || $0 == UInt8(ascii: ":") })
            else { return nil }
            hostEnd = close + 1
        } else {
            hostEnd = authority.firstIndex { !isHostByte($0) } ?? authority.endIndex
        }
        guard hostEnd > authority.startIndex else { return nil }
        // Then nothing, or `:` and the port's digits (none: the scheme's default).
        var port: Int?
        if hostEnd < authority.endIndex {
            let digits = authority[(hostEnd + 1)...]
            guard authority[hostEnd] == UInt8(ascii: ":"), digits.count <= 5,
                digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            port = digits.isEmpty ? nil : digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        let name = authority[..<hostEnd]
        let host = String(unsafeUninitializedCapacity: name.count) { output in
            for (offset, byte) in name.enumerated() { output[offset] = lower(byte) }
            return name.count
        }
        guard let port, port != defaultPort else { return host }
        return host + ":\(port)"
    }

    /// ``host(of:)`` from the URL's decoded host, lower-cased beyond ASCII too.
    static func decodedHost(of url: URL) -> String {
        guard var host = url.host, !host.isEmpty else { return "" }
        host = host.lowercased()
        if host.utf8.contains(UInt8(ascii: ":")), !host.hasPrefix("[") { host = "[" + host + "]" }
        guard let port = url.port else { return host }
        return port == url.scheme.flatMap({ defaultPort(ofScheme: $0.utf8) }) ? host : host + ":\(port)"
    }

    /// The port URLs of a scheme (in any case) mean when they name none: 80 for `http`, 443
    /// for `https`; `nil` for other schemes.
    private static func defaultPort(ofScheme scheme: some Collection<UInt8>) -> Int? {
        let equals = { (name: String) in
            scheme.elementsEqual(name.utf8) {
                ((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0) == $1
            }
        }
        return equals("http") ? 80 : equals("https") ? 443 : nil
    }
}

/// The query and form parameters of a request as `name=value` pairs, percent-encoded as on the
/// wire, in one buffer, sorted by their bytes.
private struct SortedPairs {
    private let bytes: [UInt8]
    private let pairs: [(range: Range<Int>, inQuery: Bool)]

    /// The pairs of `query` and `form` but those named `excluding`.
    init(query: [Parameters.Item], form: [Parameters.Item], excluding: String?) {
        let capacity = query.reduce(0) { $0 + $1.maximumEncodedCount } + form.reduce(0) { $0 + $1.maximumEncodedCount }
        var pairs: [(range: Range<Int>, inQuery: Bool)] = []
        pairs.reserveCapacity(query.count + form.count)
        bytes = [UInt8](unsafeUninitializedCapacity: capacity) { output, count in
            count = 0
            for inQuery in [true, false] {
                for item in inQuery ? query : form where item.name != excluding {
                    let start = count
                    count = item.writeEncoded(to: output, at: count)
                    pairs.append((start..<count, inQuery))
                }
            }
        }
        bytes.withUnsafeBufferPointer { buffer in
            pairs.sort { Self.precedes(buffer, $0.range, $1.range) }
        }
        self.pairs = pairs
    }

    /// The pairs of the query (`true`), the form (`false`) or both (`nil`) joined with `&`.
    func joined(inQuery: Bool?) -> String {
        let chosen = { (pair: (range: Range<Int>, inQuery: Bool)) in inQuery == nil || pair.inQuery == inQuery }
        var length = -1
        for pair in pairs where chosen(pair) { length += 1 + pair.range.count }
        return bytes.withUnsafeBufferPointer { buffer in
            String(unsafeUninitializedCapacity: max(length, 0)) { text in
                var count = 0
                var isFirst = true
                for pair in pairs where chosen(pair) {
                    if !isFirst {
                        text[count] = UInt8(ascii: "&")
                        count += 1
                    }
                    isFirst = false
                    count += UnsafeMutableBufferPointer(rebasing: text[count...])
                        .initialize(fromContentsOf: UnsafeBufferPointer(rebasing: buffer[pair.range]))
                }
                return count
            }
        }
    }

    /// Whether the bytes in `lhs` sort before those in `rhs`.
    private static func precedes(_ buffer: UnsafeBufferPointer<UInt8>, _ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        let common = min(lhs.count, rhs.count)
        if common > 0, let base = buffer.baseAddress {
            let order = memcmp(base + lhs.lowerBound, base + rhs.lowerBound, common)
            if order != 0 { return order < 0 }
        }
        return lhs.count < rhs.count
    }
}
