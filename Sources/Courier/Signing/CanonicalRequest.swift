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
///   the scheme's default (80 for `http`, 443 for `https`), read from the request's URL: the
///   `Host` header it goes with. (``SigningInterceptor`` refuses a request whose own `Host`
///   header names another.) A backend that builds the ``HTTPRequest`` it received to verify it
///   gives it a URL whose host is the `Host` header it received, not the address it listens on.
/// - `PATH`: ``path``, the URL path exactly as sent (percent-encoded, without `.` and `..`
///   segments), `/` when empty.
/// - `QUERY` and `FORM` (v2): ``sortedQuery`` and ``sortedForm``, the query parameters and the
///   form (or multipart text) fields kept apart, each list written `name=value` percent-encoded
///   by ``PercentEncoding``, sorted by bytes and joined with `&`. The signature parameter is
///   left out of both.
/// - `SORTED-PARAMETERS` (v1): ``sortedParameters``, the query and form parameters merged into one
///   such list, so moving a parameter between query and body does not change a v1 signature.
/// - `BODY-SHA256`: ``bodyHash``, the lower-case hex SHA-256 of a JSON, raw or (in v2) file body,
///   which is what a backend receives as the body; of no bytes for no body, a form, or a
///   multipart form (its text fields are on the `FORM` line, its files are not signed). Version
///   1 signs a file body as no bytes, as it always did.
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
    /// Lower-case hex SHA-256 of the body's bytes for a body that is not a form (a file's in
    /// version 2), of no bytes otherwise.
    public let bodyHash: String

    /// Builds the canonical form of a request.
    /// - Parameters:
    ///   - request: The request, with every parameter in place.
    ///   - version: The version ``string`` is written in; it must be the one the request was
    ///     signed with.
    ///   - excluding: The name of the signature parameter, left out of the parameters.
    ///   - timestamp: The timestamp text.
    ///   - nonce: The nonce.
    ///
    /// For a file body (in version 2) the file is read here, on the calling thread, to hash it;
    /// one that cannot be read is hashed as no bytes (sending it fails anyway).
    public init(
        _ request: HTTPRequest, version: Version, excluding: String? = nil, timestamp: String, nonce: String
    ) {
        var fileHash: String?
        if case .file(let file, _) = request.body, version != .v1 { fileHash = try? FileDigest.sha256(of: file) }
        self.init(
            request, version: version, excluding: excluding, timestamp: timestamp, nonce: nonce,
            fileHash: fileHash ?? Self.emptyBodyHash)
    }

    /// The canonical form of a request whose file body (if it has one, in version 2) hashes to
    /// `fileHash`, read beforehand.
    init(
        _ request: HTTPRequest, version: Version, excluding: String?, timestamp: String, nonce: String,
        fileHash: String?
    ) {
        self.version = version
        method = request.method.rawValue
        // Host and path are read from the text of the URL as it goes on the wire.
        (host, path) = Self.hostAndPath(of: request)
        var form: [Parameters.Item] = []
        var body = Data()
        var fileBodyHash: String?
        switch request.body {
        case .form(let fields): form = fields.items
        case .multipart(let multipart): form = multipart.fields.items
        case .json(let data), .data(let data, _): body = data
        case .file where version != .v1: fileBodyHash = fileHash
        case .none, .file: break
        }
        (sortedQuery, sortedForm, sortedParameters) = SortedParameters.lists(
            query: request.query.items, form: form, excluding: excluding)
        self.timestamp = timestamp
        self.nonce = nonce
        bodyHash = fileBodyHash ?? (body.isEmpty ? Self.emptyBodyHash : Hashing.sha256(body).hexString)
    }

    /// The `HOST` and `PATH` lines of a request, read from the text of its URL as it goes on
    /// the wire.
    static func hostAndPath(of request: HTTPRequest) -> (host: String, path: String) {
        let url = (try? request.unqueriedWireURL()) ?? request.url
        var text = url.absoluteString
        return text.withUTF8 {
            (Self.plainHost(in: $0) ?? Self.decodedHost(of: url), HTTPRequest.wirePath(inText: $0))
        }
    }

    /// A `Host` header's value as the `HOST` line writes it: trimmed, lower-cased, without the
    /// scheme's default port.
    static func host(inHeader value: String, scheme: String?) -> String {
        let host = value.trimmingCharacters(in: .whitespaces).lowercased()
        let defaultPort = scheme?.lowercased() == "https" ? ":443" : ":80"
        return host.hasSuffix(defaultPort) ? String(host.dropLast(defaultPort.count)) : host
    }

    /// The lines of ``version`` joined with `\n` (no trailing newline): the text HMAC-SHA256 signs.
    public var string: String {
        String(unsafeUninitializedCapacity: joinedCount) { join(into: $0) }
    }

    /// Calls `body` with the UTF-8 bytes of ``string``, written once into memory that lasts
    /// only for the call.
    func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: joinedCount) { buffer in
            let count = join(into: buffer)
            return body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<count]))
        }
    }

    /// Calls `body` with each line ``version`` signs, in order.
    private func forEachLine(_ body: (String) -> Void) {
        // One call a line, not a loop over an array of them: no array is made for each request.
        if version == .v1 {
            body(method)
            body(path)
            body(sortedParameters)
            body(timestamp)
            body(nonce)
            body(bodyHash)
        } else {
            body("COURIER-V2")
            body(method)
            body(host)
            body(path)
            body(sortedQuery)
            body(sortedForm)
            body(bodyHash)
            body(timestamp)
            body(nonce)
        }
    }

    /// The bytes the lines take joined with `\n`.
    private var joinedCount: Int {
        var count = -1
        forEachLine { count += 1 + $0.utf8.count }
        return count
    }

    /// Writes the lines joined with `\n` into `output`, which has room for ``joinedCount``
    /// bytes, and returns how many it wrote.
    private func join(into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(output.count >= joinedCount, "no room to join the lines")
        var count = 0
        var isFirst = true
        forEachLine { line in
            if !isFirst {
                output[count] = UInt8(ascii: "\n")
                count += 1
            }
            isFirst = false
            var line = line
            count += line.withUTF8 {
                UnsafeMutableBufferPointer(rebasing: output[count...]).initialize(fromContentsOf: $0)
            }
        }
        return count
    }

    /// The SHA-256 of no bytes, which most requests sign (no body, a form).
    static let emptyBodyHash = Hashing.sha256(Data()).hexString

    /// The `Host` header value libcurl sends, lower-cased (the port only when it is not the
    /// scheme's default, an IPv6 address in brackets), read straight from an `http(s)` URL's
    /// text when its authority is ASCII letters, digits, `-._~`, brackets and a port: what most
    /// URLs are, and what needs no decoding. `nil` for any other URL (a percent-escape, user
    /// info, text beyond ASCII).
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

    /// ``plainHost(in:)`` from the URL's decoded host, lower-cased beyond ASCII too.
    static func decodedHost(of url: URL) -> String {
        guard var host = url.host, !host.isEmpty else { return "" }
        host = host.lowercased()
        if host.utf8.contains(UInt8(ascii: ":")), !host.hasPrefix("[") { host = "[" + host + "]" }
        guard let port = url.port else { return host }
        guard var scheme = url.scheme else { return host + ":\(port)" }
        return port == scheme.withUTF8({ defaultPort(ofScheme: $0[...]) }) ? host : host + ":\(port)"
    }

    /// The port URLs of a scheme (in any case) mean when they name none: 80 for `http`, 443
    /// for `https`; `nil` for other schemes.
    private static func defaultPort(ofScheme scheme: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        // `| 0x20` lower-cases a letter, and turns no other byte into one of these letters.
        func equals(_ name: StaticString) -> Bool {
            scheme.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)) {
                $0 | 0x20 == $1
            }
        }
        return equals("http") ? 80 : equals("https") ? 443 : nil
    }
}
