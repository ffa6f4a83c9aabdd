import Courier
import Foundation
import Testing

/// The worked examples of the "Signing requests" article, value for value, each signature also
/// computed by `openssl` over the pinned canonical string; and v1 signatures pinned from the
/// code before v2 existed, so deployed backends keep verifying.
@Suite struct SigningExampleTests {
    private static let secret = Data("secret".utf8)
    private static let timestamp = "1700000000"
    private static let nonce = "0123456789abcdef"

    private static func signer(
        _ algorithm: SigningInterceptor.Algorithm, placement: SigningInterceptor.Placement = .parameters()
    ) -> SigningInterceptor {
        SigningInterceptor(
            algorithm, placement: placement, now: { Date(timeIntervalSince1970: 1_700_000_000) },
            nonce: { "0123456789abcdef" })
    }

    private static func canonical(_ signed: HTTPRequest, _ version: CanonicalRequest.Version) -> String {
        CanonicalRequest(signed, version: version, excluding: "sign", timestamp: timestamp, nonce: nonce).string
    }

    /// The value of the `sign` parameter, from the form or the query.
    private static func sign(_ request: HTTPRequest) -> String? {
        if case .form(let form) = request.body, let value = form["sign"] { return value }
        return request.query["sign"]
    }

    // MARK: - Version 2

    @Test("v2 worked example: GET with parameters")
    func v2Get() async throws {
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let signed = Self.signer(.hmacSHA256(secret: Self.secret)).signedForTest(request)
        let canonical = Self.canonical(signed, .v2)
        #expect(
            canonical == """
                COURIER-V2
                GET
                api.example.com
                /v1/orders
                nonce=0123456789abcdef&page=1&q=tea%20%26%20cake&timestamp=1700000000

                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                1700000000
                0123456789abcdef
                """)
        let signature = "029af9db1f4b51670e4da571a5a2a6901b332ea210df098db6d47e2459acdf0d"
        #expect(Self.sign(signed) == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
        #expect(
            try signed.wireURL().absoluteString
                == "https://api.example.com/v1/orders?page=1&q=tea%20%26%20cake&timestamp=1700000000"
                + "&nonce=0123456789abcdef&sign=\(signature)")
    }

    @Test("v2 worked example: POST form with a query, on a non-default port")
    func v2FormAndQuery() async throws {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://API.example.com:8443/v1/pay?amount=1")!,
            body: .form(["to": "ann", "note": "tea & cake"]))
        let signed = Self.signer(.hmacSHA256(secret: Self.secret)).signedForTest(request)
        let canonical = Self.canonical(signed, .v2)
        #expect(
            canonical == """
                COURIER-V2
                POST
                api.example.com:8443
                /v1/pay
                amount=1
                nonce=0123456789abcdef&note=tea%20%26%20cake&timestamp=1700000000&to=ann
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                1700000000
                0123456789abcdef
                """)
        let signature = "2dddf0b43be1f5e6c7b2c16fbe9bfe58a48bced9e82b1c0c6b000fa170be86e6"
        #expect(Self.sign(signed) == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
        #expect(
            signed.body.encoded
                == Data(
                    "to=ann&note=tea%20%26%20cake&timestamp=1700000000&nonce=0123456789abcdef&sign=\(signature)".utf8))

        // The same request with `amount=1` moved into the form: v1 cannot tell them apart.
        let moved = HTTPRequest(
            method: .post, url: URL(string: "https://API.example.com:8443/v1/pay")!,
            body: .form(["to": "ann", "note": "tea & cake", "amount": "1"]))
        #expect(
            Self.sign(Self.signer(.hmacSHA256(secret: Self.secret)).signedForTest(moved))
                == "72805b13fd06c9c6f963f46b9034fc9b5372736cf32caaceaa73f4c6114cd69f")
        let v1 = Self.signer(.hmacSHA256(secret: Self.secret, canonicalForm: .v1))
        #expect(Self.sign(v1.signedForTest(request)) == Self.sign(v1.signedForTest(moved)))
    }

    @Test("v2 worked example: POST JSON signed in headers")
    func v2Headers() async throws {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/orders")!,
            body: .json(Data(#"{"title":"Tea"}"#.utf8)))
        let signed = Self.signer(.hmacSHA256(secret: Self.secret), placement: .headers()).signedForTest(request)
        let canonical = CanonicalRequest(signed, version: .v2, timestamp: Self.timestamp, nonce: Self.nonce).string
        #expect(
            canonical == """
                COURIER-V2
                POST
                api.example.com
                /v1/orders


                3e77eedaff828b3debc494a23ed6ffef5940e0684ca7e3a3de5eb3605aca48e4
                1700000000
                0123456789abcdef
                """)
        let signature = "e530515a9c9d870c2915ac907416c38e6c5fcc42c24b87d7899d07a4962bbdb6"
        #expect(signed.headers["X-KC-TIME"] == "1700000000")
        #expect(signed.headers["X-KC-NONCE"] == "0123456789abcdef")
        #expect(signed.headers["X-KC-HMAC"] == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
        #expect(signed.body == .json(Data(#"{"title":"Tea"}"#.utf8)), "the body is not changed after hashing")
    }

    @Test("v2 worked example: a multipart form, signed in its text fields")
    func v2Multipart() async throws {
        var form = MultipartForm(fields: ["title": "Holiday"])
        form.append(name: "photo", data: Data("jpeg".utf8), filename: "beach.jpg")
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/media")!, body: .multipart(form))
        let signed = Self.signer(.hmacSHA256(secret: Self.secret)).signedForTest(request)
        let canonical = Self.canonical(signed, .v2)
        #expect(
            canonical == """
                COURIER-V2
                POST
                api.example.com
                /v1/media

                nonce=0123456789abcdef&timestamp=1700000000&title=Holiday
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                1700000000
                0123456789abcdef
                """)
        let signature = "05b9e28789ee5e4347987e3277314d1fa4160e51e1c6eccf708efdfd59102e48"
        guard case .multipart(let sent) = signed.body else {
            Issue.record("the body is no longer multipart")
            return
        }
        #expect(sent.fields.items.map(\.name) == ["title", "timestamp", "nonce", "sign"])
        #expect(sent.fields["sign"] == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
        #expect(signed.query.items.isEmpty, "nothing in the query")
    }

    @Test("v2 worked example: a file body, hashed like any other")
    func v2File() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.file("backup.bin")
        try Data("backup bytes".utf8).write(to: file)
        let request = HTTPRequest(
            method: .put, url: URL(string: "https://api.example.com/v1/backup")!,
            body: .file(file, contentType: "application/octet-stream"))
        let signed = Self.signer(.hmacSHA256(secret: Self.secret)).signedForTest(request)
        let canonical = Self.canonical(signed, .v2)
        #expect(
            canonical == """
                COURIER-V2
                PUT
                api.example.com
                /v1/backup
                nonce=0123456789abcdef&timestamp=1700000000

                7171b7ccbaa1ac3767c1e75815c6c5bca6634f141b55b4d1a398ddf2a76b75df
                1700000000
                0123456789abcdef
                """)
        let signature = "0a405315eba6dab51dcad94dc8716e95dd24a54d1aaf0eebb363f44003682e82"
        #expect(Self.sign(signed) == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
    }

    // MARK: - Version 1

    @Test("v1 worked example: GET with parameters")
    func v1Get() async throws {
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let signed = Self.signer(.hmacSHA256(secret: Self.secret, canonicalForm: .v1)).signedForTest(request)
        let canonical = Self.canonical(signed, .v1)
        #expect(
            canonical == """
                GET
                /v1/orders
                nonce=0123456789abcdef&page=1&q=tea%20%26%20cake&timestamp=1700000000
                1700000000
                0123456789abcdef
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        let signature = "04ac49d721f70216c96932e6ca5f8620009f57357e2f3e2e6c2fe04469c400f3"
        #expect(Self.sign(signed) == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
        #expect(try signed.wireURL().absoluteString.hasSuffix("&sign=\(signature)"))
    }

    @Test("v1 worked example: POST JSON signed in headers")
    func v1Headers() async throws {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/orders")!,
            body: .json(Data(#"{"title":"Tea"}"#.utf8)))
        let signed = Self.signer(.hmacSHA256(secret: Self.secret, canonicalForm: .v1), placement: .headers())
            .signedForTest(request)
        let canonical = CanonicalRequest(signed, version: .v1, timestamp: Self.timestamp, nonce: Self.nonce).string
        #expect(
            canonical == """
                POST
                /v1/orders

                1700000000
                0123456789abcdef
                3e77eedaff828b3debc494a23ed6ffef5940e0684ca7e3a3de5eb3605aca48e4
                """)
        let signature = "a6c55dd84815dba0bd9dd56931781d48d53921cd8e85e41a0148ace1f541d2ac"
        #expect(signed.headers["X-KC-HMAC"] == signature)
        #expect(try await WireSignature.hmacSHA256(canonical, secret: Self.secret) == signature)
    }

    /// Signatures the code made before v2 existed (commit dc05ee1), for inputs beyond the
    /// worked examples: a port, query and form together, a `PUT` with a query and JSON.
    @Test("v1 signs byte for byte as before v2 existed")
    func v1IsUnchanged() {
        let v1 = SigningInterceptor.Algorithm.hmacSHA256(secret: Self.secret, canonicalForm: .v1)
        let form = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com:8443/v1/pay?amount=1")!,
            body: .form(["to": "ann", "note": "tea & cake"]))
        #expect(
            Self.sign(Self.signer(v1).signedForTest(form))
                == "de4dc0504ae5f6a7a7b7908d05cf04cc2b2f3bb8e09edc8b59fe240ac14e6115")
        let json = HTTPRequest(
            method: .put, url: URL(string: "https://api.example.com/v1/orders/42?lang=zh")!,
            body: .json(Data(#"{"title":"Tea"}"#.utf8)))
        #expect(
            Self.signer(v1, placement: .headers()).signedForTest(json).headers["X-KC-HMAC"]
                == "8cba9653259cb91d73224758c51082f9b67086271bbe2e87157cdbd117425686")
    }

    // MARK: - Legacy MD5

    @Test("legacy MD5 worked example: sorted parameters + key, checked against openssl")
    func legacyMD5() async throws {
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let signed = Self.signer(.legacyMD5(key: "secret")).signedForTest(request)
        let text = "nonce=0123456789abcdef&page=1&q=tea%20%26%20cake&timestamp=1700000000&key=secret"
        #expect(Self.sign(signed) == "4ddc5575369ecbe97bf6e35bd1d15c56")
        #expect(try await OpenSSL.digest(Data(text.utf8), arguments: ["-md5"]) == "4ddc5575369ecbe97bf6e35bd1d15c56")
        let inHeaders = Self.signer(.legacyMD5(key: "secret"), placement: .headers()).signedForTest(request)
        #expect(inHeaders.headers["X-KC-HMAC"] == "4641effefe9127791d0388b7ceaf5427", "as before v2 existed")
    }

    @Test("legacy MD5 worked example: timestamp and nonce covered in headers")
    func legacyMD5CoveringTimestamp() async throws {
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let algorithm = SigningInterceptor.Algorithm.legacyMD5(key: "secret", coveringTimestampAndNonce: true)
        let signed = Self.signer(algorithm, placement: .headers()).signedForTest(request)
        let text = "page=1&q=tea%20%26%20cake&timestamp=1700000000&nonce=0123456789abcdef&key=secret"
        let signature = try await OpenSSL.digest(Data(text.utf8), arguments: ["-md5"])
        #expect(signed.headers["X-KC-HMAC"] == signature)
        #expect(signature == "6b4536f2b19a40517c57ef42ee7b6b52")
    }

    @Test(
        "legacy MD5 in headers signs the timestamp only when asked: otherwise a captured request replays",
        arguments: [false, true])
    func legacyMD5Replay(covering: Bool) {
        let request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v1/orders?page=1")!)
        let signatures = [1_700_000_000, 1_800_000_000].map { seconds in
            SigningInterceptor(
                .legacyMD5(key: "secret", coveringTimestampAndNonce: covering), placement: .headers(),
                now: { Date(timeIntervalSince1970: TimeInterval(seconds)) }, nonce: { "0123456789abcdef" }
            )
            .signedForTest(request).headers["X-KC-HMAC"]
        }
        #expect((signatures[0] == signatures[1]) == !covering)
    }
}
