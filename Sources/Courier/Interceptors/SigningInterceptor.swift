import Foundation

/// Signs every request after all other layers have added their parameters: put it last (innermost)
/// in ``NetworkClient/Configuration/interceptors``. A retry runs it again, so every attempt
/// carries a fresh timestamp, nonce and signature.
///
/// The signature is computed over a ``CanonicalRequest`` (version 2 unless the algorithm names
/// another) and sent, with the timestamp and nonce,
/// either as parameters (`sign`) or as headers (`X-KC-TIME` / `X-KC-HMAC`).
/// As parameters they go in the query of a `GET`, `HEAD` or `DELETE`; for other methods, in the
/// fields of a url-encoded form, in the text fields of a multipart form, in the form a request
/// without a body gets, and in the query for a JSON, raw or file body, so that body is never
/// changed after it was hashed. Headers other than the three it adds, common parameters sent as
/// headers among them, are not signed.
///
/// ```swift
/// .signing(.hmacSHA256(secret: Data(key.utf8)), placement: .parameters(signature: "sign"))
/// ```
///
/// With a ``ClockCorrection``, a request whose timestamp the backend refuses is signed again
/// with the server's time, once, and later requests to that server use it from the start.
public struct SigningInterceptor: Interceptor {
    /// How the signature is computed from the canonical request: HMAC-SHA256, the legacy MD5
    /// scheme, or an algorithm of your own.
    ///
    /// ```swift
    /// import CryptoKit
    ///
    /// // HMAC-SHA1, hex:
    /// let sha1 = SigningInterceptor.Algorithm { canonical in
    ///     let code = HMAC<Insecure.SHA1>.authenticationCode(
    ///         for: Data(canonical.string.utf8), using: SymmetricKey(data: secret))
    ///     return code.map { String(format: "%02x", $0) }.joined()
    /// }
    /// ```
    public struct Algorithm: Sendable {
        /// The version of ``CanonicalRequest`` the signature is computed over.
        public let canonicalForm: CanonicalRequest.Version
        let sign: @Sendable (CanonicalRequest) throws -> String

        /// An algorithm of your own (HMAC-SHA1, SM3, RSA, a hardware key, …): `sign` gets the
        /// canonical request, whose ``CanonicalRequest/string`` is the text to sign and whose
        /// parts (method, host, path, sorted query and form, body hash, timestamp, nonce) are
        /// there for a scheme that arranges them otherwise, and returns the signature as sent.
        /// An error it throws fails the request with ``NetworkError/Code/invalidRequest``,
        /// before anything is sent. It runs synchronously, on every attempt: it must not wait for
        /// the user (a key that needs a passcode), and an error it throws should not carry key
        /// material, since the failure's description shows it.
        /// - Parameters:
        ///   - canonicalForm: The version of the canonical form; ``CanonicalRequest/Version/v2``
        ///     by default.
        ///   - sign: Computes the signature.
        public init(
            canonicalForm: CanonicalRequest.Version = .v2, sign: @escaping @Sendable (CanonicalRequest) throws -> String
        ) {
            self.canonicalForm = canonicalForm
            self.sign = sign
        }

        /// Lower-case hex HMAC-SHA256 of ``CanonicalRequest/string`` under `secret`.
        ///
        /// Version 2 of the canonical form, the default, covers the host and port and keeps the
        /// query apart from the body. Pass ``CanonicalRequest/Version/v1`` only for a backend that
        /// verifies version 1 and cannot yet verify version 2: such a backend rejects version 2
        /// signatures.
        /// - Parameters:
        ///   - secret: The shared secret.
        ///   - canonicalForm: The version of the canonical form; ``CanonicalRequest/Version/v2``
        ///     by default.
        /// - Returns: The algorithm.
        public static func hmacSHA256(secret: Data, canonicalForm: CanonicalRequest.Version = .v2) -> Algorithm {
            let key = Hashing.hmacSHA256(key: secret)
            return Algorithm(canonicalForm: canonicalForm) { canonical in
                canonical.withUTF8 { key.code(for: $0) }.hexString
            }
        }

        /// **Legacy**: lower-case hex MD5 of the sorted parameters followed by `&key=<key>`, the
        /// "sorted params + key, MD5" scheme some older backends demand. MD5 is broken; use it
        /// only when the backend gives no choice.
        ///
        /// Method, host, path and body are not covered, nor is whether a parameter was in the
        /// query or the body. With ``Placement/headers(signature:timestamp:nonce:)`` the
        /// timestamp and nonce are not parameters, so they are not covered either and a captured
        /// request can be replayed forever, unless `coveringTimestampAndNonce` is `true`.
        /// - Parameters:
        ///   - key: The shared key.
        ///   - coveringTimestampAndNonce: Whether `&timestamp=<timestamp>&nonce=<nonce>` is
        ///     written before `&key=<key>`, whatever the placement. `false` by default, the
        ///     scheme as older backends know it; turn it on only for a backend that checks it.
        /// - Returns: The algorithm.
        public static func legacyMD5(key: String, coveringTimestampAndNonce: Bool = false) -> Algorithm {
            Algorithm(canonicalForm: .v1) { canonical in
                var pairs = canonical.sortedParameters.isEmpty ? [] : [canonical.sortedParameters]
                if coveringTimestampAndNonce {
                    pairs.append("timestamp=" + PercentEncoding.encode(canonical.timestamp))
                    pairs.append("nonce=" + PercentEncoding.encode(canonical.nonce))
                }
                pairs.append("key=" + key)
                return Hashing.md5(Data(pairs.joined(separator: "&").utf8)).hexString
            }
        }
    }

    /// Where the signature, timestamp and nonce are sent.
    public enum Placement: Sendable, Hashable {
        /// As parameters with these names, which must differ: a request signed with two of them
        /// alike fails with ``NetworkError/Code/invalidRequest``.
        case parameters(signature: String = "sign", timestamp: String = "timestamp", nonce: String = "nonce")
        /// As headers with these names, which must differ in more than case: a request signed
        /// with two of them alike fails with ``NetworkError/Code/invalidRequest``.
        case headers(signature: String = "X-KC-HMAC", timestamp: String = "X-KC-TIME", nonce: String = "X-KC-NONCE")

        /// Whether the three names differ (header names in more than case), so none of the three
        /// values replaces another.
        fileprivate var hasDistinctNames: Bool {
            switch self {
            case .parameters(let signature, let timestamp, let nonce):
                Set([signature, timestamp, nonce]).count == 3
            case .headers(let signature, let timestamp, let nonce):
                Set([signature.lowercased(), timestamp.lowercased(), nonce.lowercased()]).count == 3
            }
        }
    }

    private let algorithm: Algorithm
    private let placement: Placement
    /// Whether the placement's three names differ, found once.
    private let hasDistinctNames: Bool
    private let clockCorrection: ClockCorrection?
    /// The JSON field the clock correction reads the server's time from, if it reads one: the
    /// client's envelope view looks for it (see ``EnvelopeView``).
    var serverTimeField: String? { clockCorrection?.serverTimeField }
    private let offsets = ClockOffsets()
    private let now: @Sendable () -> Date
    private let makeNonce: @Sendable () -> String

    /// Creates the layer.
    /// - Parameters:
    ///   - algorithm: How the signature is computed.
    ///   - placement: Where it is sent.
    ///   - clockCorrection: How a refused timestamp is corrected, if the backend says so.
    ///   - now: The clock for timestamps.
    ///   - nonce: Makes a nonce; 128 random bits as hex by default.
    public init(
        _ algorithm: Algorithm, placement: Placement = .parameters(), clockCorrection: ClockCorrection? = nil,
        now: @escaping @Sendable () -> Date = Date.init,
        nonce: @escaping @Sendable () -> String = SigningInterceptor.randomNonce
    ) {
        self.algorithm = algorithm
        self.placement = placement
        self.hasDistinctNames = placement.hasDistinctNames
        self.clockCorrection = clockCorrection
        self.now = now
        self.makeNonce = nonce
    }

    /// ``InterceptorLayer/signing``.
    public var layer: InterceptorLayer { .signing }

    /// Signs the request, then calls `next`; with a ``ClockCorrection``, signs it once more with
    /// the server's time when the backend refuses its timestamp.
    /// - Parameters:
    ///   - request: The request with every other parameter in place.
    ///   - context: Reads business codes.
    ///   - next: The inner layers.
    /// - Returns: The response of the inner layers.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when the request cannot be signed (see
    ///   ``sign(_:)``); whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        try checkSignable(request)
        let origin = request.url.origin
        let used = offsets.current(for: origin)
        // A file body is read once, off Swift's threads, for every signature of this call.
        var fileHash: String?
        if case .file(let file, _) = request.body, algorithm.canonicalForm != .v1 {
            fileHash = try await Blocking.run { flag throws(NetworkError) in
                try FileDigest.sha256(of: file, cancellation: flag)
            }
        }
        let sent = now()
        let response = try await next(sign(request, offset: used, at: sent, fileHash: fileHash))
        guard let clockCorrection, clockCorrection.refuses(response, context),
            let candidate = clockCorrection.offset(in: response, context, sent: sent, arrived: now(), used: used)
        else { return response }
        // Kept only when the server takes the request signed with it, within the session the
        // request began in.
        request.timeline?.willResend(.resigned)
        let resent = try await next(sign(request, offset: candidate, at: now(), fileHash: fileHash))
        if clockCorrection.accepts(resent, context), context.epoch.isCurrent { offsets.set(candidate, for: origin) }
        return resent
    }

    /// The request with timestamp, nonce and signature added.
    /// - Parameter request: The request with every other parameter in place.
    /// - Returns: The signed request.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when the algorithm fails, two of the
    ///   signature, timestamp and nonce have the same name, the request carries a `Host` header
    ///   that names another host than its URL (in version 2, whose signature covers the host
    ///   the request goes to, which a backend reads from `Host`), or its file body (signed in
    ///   version 2) cannot be read.
    ///
    /// A file body is read on the calling thread to hash it.
    public func sign(_ request: HTTPRequest) throws(NetworkError) -> HTTPRequest {
        try checkSignable(request)
        var fileHash: String?
        if case .file(let file, _) = request.body, algorithm.canonicalForm != .v1 {
            fileHash = try FileDigest.sha256(of: file)
        }
        return try sign(request, offset: offsets.current(for: request.url.origin), at: now(), fileHash: fileHash)
    }

    /// The request signed with a timestamp `offset` seconds from `date`, the clock's time; a
    /// file body hashes to `fileHash`.
    private func sign(_ request: HTTPRequest, offset: TimeInterval, at date: Date, fileHash: String?)
        throws(NetworkError) -> HTTPRequest
    {
        var request = request
        let seconds = (date.timeIntervalSince1970 + offset).rounded(.down)
        guard let whole = Int64(exactly: seconds) else {
            throw NetworkError(.invalidRequest, "The clock's time \(seconds) cannot be a timestamp.")
        }
        let timestamp = String(whole)
        let nonce = makeNonce()
        switch placement {
        case .parameters(let signatureName, let timestampName, let nonceName):
            // All three go in at once, the signature empty (it is not signed) until it is known.
            request.addParameters(
                Parameters([
                    .init(name: timestampName, value: timestamp), .init(name: nonceName, value: nonce),
                    .init(name: signatureName, value: ""),
                ]), merge: .replaceExisting)
            let canonical = CanonicalRequest(
                request, version: algorithm.canonicalForm, excluding: signatureName, timestamp: timestamp, nonce: nonce,
                fileHash: fileHash)
            let signature = try signature(of: canonical)
            request.setLastParameter(named: signatureName, to: signature)
            request.markAsSecret(signature)
            request.notes.volatileNames += [timestampName, nonceName, signatureName]
        case .headers(let signatureName, let timestampName, let nonceName):
            let canonical = CanonicalRequest(
                request, version: algorithm.canonicalForm, excluding: nil, timestamp: timestamp, nonce: nonce,
                fileHash: fileHash)
            request.headers[timestampName] = timestamp
            request.headers[nonceName] = nonce
            let signature = try signature(of: canonical)
            request.headers[signatureName] = signature
            request.markAsSecret(signature)
            request.notes.volatileNames += [timestampName, nonceName, signatureName]
        }
        return request
    }

    /// Refuses, before anything is read or signed, a request whose signature could not be
    /// right: the placement's names alike, or (in version 2, which covers the host) a `Host`
    /// header naming another host than the URL's.
    private func checkSignable(_ request: HTTPRequest) throws(NetworkError) {
        guard hasDistinctNames else {
            throw NetworkError(.invalidRequest, "The signature, timestamp and nonce need three different names.")
        }
        if algorithm.canonicalForm != .v1, let header = request.headers["Host"],
            CanonicalRequest.host(inHeader: header, scheme: request.url.scheme)
                != CanonicalRequest.hostAndPath(of: request).host
        {
            throw NetworkError(
                .invalidRequest, "A signed request's Host header must name its URL's host; set the URL's host instead.")
        }
    }

    private func signature(of canonical: CanonicalRequest) throws(NetworkError) -> String {
        do {
            return try algorithm.sign(canonical)
        } catch {
            throw NetworkError(.invalidRequest, "The request could not be signed.", underlying: error)
        }
    }

    /// 128 random bits as 32 lower-case hex digits.
    @Sendable public static func randomNonce() -> String {
        RandomPool.shared.hexString(ofBytes: 16)
    }
}

extension Interceptor where Self == SigningInterceptor {
    /// A ``SigningInterceptor``.
    /// - Parameters:
    ///   - algorithm: How the signature is computed.
    ///   - placement: Where it is sent.
    ///   - clockCorrection: How a refused timestamp is corrected, if the backend says so.
    /// - Returns: The layer.
    public static func signing(
        _ algorithm: SigningInterceptor.Algorithm, placement: SigningInterceptor.Placement = .parameters(),
        clockCorrection: ClockCorrection? = nil
    ) -> Self {
        SigningInterceptor(algorithm, placement: placement, clockCorrection: clockCorrection)
    }
}
