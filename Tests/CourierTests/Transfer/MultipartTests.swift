import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Multipart uploads over loopback, parsed by the test server.
@Suite struct MultipartTests {
    private struct Media: Codable, Sendable, Equatable {
        let id: Int
    }

    private func uploadRoute(_ backend: Backend) {
        backend.server.route("/v1/media") { _ in .envelope(data: Media(id: 7)) }
    }

    @Test("fields and files arrive byte for byte, with names, filenames and media types")
    func fieldsAndFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        uploadRoute(backend)
        let binary = patternedBytes(100_000)
        let onDisk = directory.file("beach.JPG")
        try patternedBytes(70_000, seed: 3).write(to: onDisk)
        var form = MultipartForm(fields: ["title": "Holiday & more", "note": "line one\r\nline two ✓"])
        form.append(name: "blob", data: binary, filename: "raw.bin", contentType: "application/x-custom")
        form.append(name: "photo", fileAt: onDisk)
        form.append(name: "voice", data: Data("amr".utf8), filename: "note.m4a")

        let media = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))

        #expect(media == Media(id: 7))
        let request = try #require(backend.server.requests.first)
        let parts = try #require(request.multipartParts, "the body is well-formed multipart")
        #expect(parts.map(\.name) == ["title", "note", "blob", "photo", "voice"])
        #expect(parts[0].text == "Holiday & more" && parts[0].filename == nil)
        #expect(parts[1].text == "line one\r\nline two ✓", "CR/LF in a value is content, not structure")
        #expect(parts[2].content == binary && parts[2].filename == "raw.bin")
        #expect(parts[2].headers["Content-Type"] == "application/x-custom")
        #expect(parts[3].content == patternedBytes(70_000, seed: 3) && parts[3].filename == "beach.JPG")
        #expect(parts[3].headers["Content-Type"] == "image/jpeg", "guessed from the extension, any case")
        #expect(parts[4].headers["Content-Type"] == "audio/mp4")
        #expect(request.headers["Content-Length"] == String(request.body.count) && !request.wasChunked)
        let boundary = try #require(request.multipartBoundary)
        #expect(boundary.hasPrefix("Courier-") && boundary.count == 40)
    }

    @Test("quotes in names and filenames are escaped; non-ASCII filenames are sent as UTF-8")
    func escaping() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        uploadRoute(backend)
        var form = MultipartForm()
        form.append(name: #"a"b"#, value: "1")
        form.append(name: "file", data: Data("x".utf8), filename: #"my "best" Fotó.png"#)
        // A quote followed by a combining mark is one character but still a quote on the wire:
        // unescaped, it would end the name and start parameters of its own (found by the fuzz target).
        form.append(name: "b\"\u{0327}; filename=\"evil.sh", value: "2")

        _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))

        let parts = try #require(backend.server.requests.first?.multipartParts)
        #expect(parts[0].headers["Content-Disposition"] == #"form-data; name="a%22b""#)
        #expect(parts[1].headers["Content-Disposition"] == "form-data; name=\"b%22\u{0327}; filename=%22evil.sh\"")
        #expect(parts[1].filename == nil)
        #expect(parts[2].filename == "my %22best%22 Fotó.png")
        #expect(parts[2].headers["Content-Type"] == "image/png")
    }

    @Test(
        "CR, LF or NUL in a name or filename is refused before anything is sent",
        arguments: ["a\rb", "a\nb", "a\r\nContent-Type: evil", "a\u{0}b"])
    func headerInjection(_ name: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        uploadRoute(backend)
        var asField = MultipartForm()
        asField.append(name: name, value: "v")
        var asFilename = MultipartForm()
        asFilename.append(name: "file", data: Data(), filename: name)

        for form in [asField, asFilename] {
            let error = await networkError {
                _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))
            }
            #expect(error?.code == .invalidRequest)
            #expect(error?.message.contains("CR, LF or NUL") == true)
        }
        #expect(backend.server.requests.isEmpty)
    }

    @Test(
        "a control character in a file's media type is refused before anything is sent",
        arguments: ["image/png\r\nX-Injected: 1", "image/png\nX", "image/png\u{0}", "image/png\u{1B}"])
    func mediaTypeInjection(_ contentType: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        uploadRoute(backend)
        var form = MultipartForm()
        form.append(name: "file", data: Data("x".utf8), filename: "a.png", contentType: contentType)

        let error = await networkError {
            _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))
        }

        #expect(error?.code == .invalidRequest, "\(String(describing: error))")
        #expect(backend.server.requests.isEmpty)
    }

    @Test("a multipart body written to a temporary file is private (0600) and removed afterwards")
    func temporaryFileIsPrivate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let modes = Log()
        backend.server.route("/v1/media") { _ in
            // The body is on disk while the request is in flight.
            for name in directory.names {
                let attributes = try? FileManager.default.attributesOfItem(atPath: directory.file(name).path)
                modes.append(String((attributes?[.posixPermissions] as? NSNumber)?.intValue ?? -1, radix: 8))
            }
            return .envelope(data: Media(id: 7))
        }
        var form = MultipartForm(fields: ["title": "x"])
        form.append(name: "blob", data: patternedBytes(100_000), filename: "raw.bin")
        form.memoryThreshold = 0
        form.temporaryDirectory = directory.url

        let media = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))

        #expect(media == Media(id: 7))
        #expect(modes.all == ["600"], "one temporary file, mode 0600")
        #expect(directory.names.isEmpty)
    }

    @Test("a boundary found in the content is replaced by another")
    func boundaryCollision() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        uploadRoute(backend)
        let candidates = Log()
        var form = MultipartForm(fields: ["text": "contains Courier-FIRST inside"])
        form.makeBoundary = {
            let next = candidates.all.isEmpty ? "Courier-FIRST" : "Courier-SECOND"
            candidates.append(next)
            return next
        }

        _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))

        let request = try #require(backend.server.requests.first)
        #expect(candidates.all == ["Courier-FIRST", "Courier-SECOND"])
        #expect(request.multipartBoundary == "Courier-SECOND")
        #expect(request.multipartParts?.first?.text == "contains Courier-FIRST inside")
    }

    @Test("a missing file is refused with invalidRequest before anything is sent")
    func missingFile() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        var form = MultipartForm()
        form.append(name: "photo", fileAt: URL(fileURLWithPath: "/nonexistent/courier/photo.jpg"))

        let error = await networkError {
            _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))
        }

        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("photo.jpg") == true)
        #expect(backend.server.requests.isEmpty)
    }

    @Test("text fields get the common parameters and are signed; files are not touched")
    func interceptorsSeeFields() async throws {
        let secret = Data("multipart-secret".utf8)
        let backend = try Backend {
            $0.session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "T-1")))
            $0.interceptors = [.commonParameters(["version": "2.1"]), .signing(.hmacSHA256(secret: secret))]
        }
        defer { backend.server.stop() }
        uploadRoute(backend)
        var form = MultipartForm(fields: ["title": "a b"])
        form.append(name: "photo", data: Data("jpeg".utf8), filename: "p.jpg")

        _ = try await backend.client.send(Endpoint<Media>.post("media", body: .multipart(form)))

        let request = try #require(backend.server.requests.first)
        let parts = try #require(request.multipartParts)
        let fields = Parameters(parts.filter { $0.filename == nil }.map { .init(name: $0.name ?? "", value: $0.text) })
        #expect(request.headers["token"] == "T-1")
        #expect(fields["version"] == "2.1" && fields["title"] == "a b")
        let timestamp = try #require(fields["timestamp"])
        let nonce = try #require(fields["nonce"])
        let unsigned = HTTPRequest(
            method: .post, url: backend.server.baseURL.appendingPathComponent("v1/media"),
            body: .form(Parameters(fields.items.filter { $0.name != "sign" })))
        let canonical = CanonicalRequest(unsigned, version: .v2, timestamp: timestamp, nonce: nonce)
        #expect(try fields["sign"] == SigningInterceptor.Algorithm.hmacSHA256(secret: secret).sign(canonical))
        #expect(parts.last?.content == Data("jpeg".utf8))
    }

    @Test("an upload is retried only when the endpoint allows it")
    func retryOnlyWhenAllowed() async throws {
        let backend = try Backend {
            $0.interceptors = [.retry(.init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(10)))]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in .init(status: 503) }
        var form = MultipartForm()
        form.append(name: "file", data: Data("x".utf8), filename: "x.txt")
        let endpoint = Endpoint<Media>.post("media", body: .multipart(form))

        _ = await networkError { _ = try await backend.client.upload(endpoint).value }
        #expect(backend.server.requests.count == 1, "a POST is never sent twice on its own")

        _ = await networkError { _ = try await backend.client.upload(endpoint.idempotent()).value }
        #expect(backend.server.requests.count == 4, "an idempotent upload is retried up to the limit")
    }

    @Test("a raw file body is streamed with its Content-Length")
    func rawFileBody() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/backup") { _ in .empty204 }
        let file = directory.file("backup.zip")
        try patternedBytes(300_000, seed: 11).write(to: file)

        _ = try await backend.client.send(
            Endpoint<EmptyResponse>(
                method: .put, path: "backup", body: .file(file, contentType: "application/zip"), decoding: .empty))

        let request = try #require(backend.server.requests.first)
        #expect(request.body == patternedBytes(300_000, seed: 11))
        #expect(request.headers["Content-Type"] == "application/zip")
        #expect(request.headers["Content-Length"] == "300000" && !request.wasChunked)
    }
}
