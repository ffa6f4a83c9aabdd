import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Downloads to a file over loopback: streaming, atomic placement, errors and resume.
@Suite struct DownloadTests {
    /// Serves `content` with an ETag, honouring `Range: bytes=N-` when `If-Range` matches and
    /// `supportsRanges` is set. `fault` applies to full answers only.
    private static func file(
        _ content: Data, etag: String = "\"v1\"", supportsRanges: Bool = true,
        fault: LoopbackServer.Fault? = nil
    ) -> LoopbackServer.Handler {
        { request in
            var headers: HTTPHeaders = ["Content-Type": "application/octet-stream", "ETag": etag]
            if supportsRanges, let range = request.headers["Range"], request.headers["If-Range"] == etag,
                range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()), start < content.count
            {
                headers["Content-Range"] = "bytes \(start)-\(content.count - 1)/\(content.count)"
                return LoopbackServer.Response(
                    status: 206, headers: headers, body: content.subdata(in: start..<content.count))
            }
            headers["Accept-Ranges"] = supportsRanges ? "bytes" : "none"
            let response = LoopbackServer.Response(status: 200, headers: headers, body: content)
            return fault.map { response.with($0) } ?? response
        }
    }

    private static let brokenAt = 3_000_000

    @Test("a 64 MB body is streamed to the destination; its SHA-256 matches")
    func largeDownload() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend(timeout: .seconds(120))
        defer { backend.server.stop() }
        let content = patternedBytes(64 << 20)
        backend.server.route("/v1/big", handler: Self.file(content))
        let destination = directory.file("big.bin")

        let task = backend.client.download(.download("big"), to: destination)
        let seen = collect(task.progressUpdates())
        let file = try await task.value
        let values = await seen.value

        #expect(
            file
                == DownloadedFile(
                    url: destination, byteCount: Int64(64 << 20), resumedFrom: 0, status: 200, headers: file.headers))
        let expected = try await OpenSSL.digest(content, arguments: ["-sha256"])
        let stored = try await OpenSSL.digest(try Data(contentsOf: destination), arguments: ["-sha256"])
        #expect(stored == expected && expected.count == 64)
        #expect(directory.names == ["big.bin"], "no partial file is left beside it")
        #expect(values.count >= 3, "progress arrives while the body streams")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        #expect(values.last == TransferProgress(completed: Int64(64 << 20), expected: Int64(64 << 20)))
    }

    @Test("an error status never produces a file; its body is in the error")
    func errorStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/gone") { _ in .json(#"{"code":404,"msg":"no such report"}"#, status: 404) }

        let error = await networkError {
            _ = try await backend.client.download(.download("gone"), to: directory.file("r.pdf")).value
        }

        #expect(error?.code == .httpStatus && error?.status == 404)
        #expect(error?.businessMessage == "no such report")
        #expect(error?.resumeData == nil)
        #expect(directory.names.isEmpty)
    }

    @Test("a connection lost mid-body leaves nothing at the destination; resume continues with Range")
    func resumeWithRange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let content = patternedBytes(8_000_000, seed: 21)
        backend.server.route("/v1/report", handler: Self.file(content, fault: .closeMidBody(afterBytes: Self.brokenAt)))
        let destination = directory.file("report.bin")

        let error = await networkError {
            _ = try await backend.client.download(.download("report"), to: destination).value
        }

        #expect(error?.code == .transport)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let resumeData = try #require(error?.resumeData)
        #expect(resumeData.bytesReceived > 0 && resumeData.bytesReceived <= Int64(Self.brokenAt))
        #expect(resumeData.validator == "\"v1\"" && resumeData.continuesWithRange)
        #expect(directory.names.count == 1 && directory.names[0].hasPrefix(".report.bin.courier-download-"))

        let task = backend.client.resumeDownload(resumeData)
        let seen = collect(task.progressUpdates())
        let file = try await task.value
        let values = await seen.value

        #expect(try Data(contentsOf: destination) == content)
        #expect(file.status == 206 && file.resumedFrom == resumeData.bytesReceived)
        let resumed = try #require(backend.server.requests.last)
        #expect(resumed.headers["Range"] == "bytes=\(resumeData.bytesReceived)-")
        #expect(resumed.headers["If-Range"] == "\"v1\"")
        #expect(
            values.first.map { $0.completed >= resumeData.bytesReceived } == true, "progress starts at the bytes kept")
        #expect(values.last == TransferProgress(completed: 8_000_000, expected: 8_000_000))
        #expect(directory.names == ["report.bin"])
    }

    @Test("resume data saved as JSON continues the download in a new client, as after a relaunch")
    func resumeAfterRelaunch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let content = patternedBytes(4_000_000, seed: 5)
        backend.server.route("/v1/report", handler: Self.file(content, fault: .closeMidBody(afterBytes: Self.brokenAt)))
        let destination = directory.file("report.bin")
        let endpoint = DownloadEndpoint.download("report", query: ["v": "2"], headers: ["X-Trace": "t1"])
            .timeout(.seconds(9)).skipping("audit").maximumResponseBodySize(8_000_000)

        let error = await networkError { _ = try await backend.client.download(endpoint, to: destination).value }
        let saved = try JSONEncoder().encode(try #require(error?.resumeData))
        let restored = try JSONDecoder().decode(DownloadResumeData.self, from: saved)

        #expect(restored.endpoint.path == "report" && restored.endpoint.query["v"] == "2")
        #expect(restored.endpoint.headers["X-Trace"] == "t1" && restored.endpoint.timeout == .seconds(9))
        #expect(restored.endpoint.skippedLayers == ["audit"] && restored.endpoint.maximumResponseBodySize == 8_000_000)
        let relaunched = NetworkClient(configuration: backend.client.configuration)
        let file = try await relaunched.resumeDownload(restored).value
        #expect(try Data(contentsOf: destination) == content)
        #expect(file.status == 206 && file.resumedFrom == restored.bytesReceived && restored.bytesReceived > 0)
        let resumed = try #require(backend.server.requests.last)
        #expect(resumed.target == "/v1/report?v=2" && resumed.headers["X-Trace"] == "t1")
        #expect(directory.names == ["report.bin"])

        // Resumed again, its partial file is gone (it became the destination): a clear error.
        try FileManager.default.removeItem(at: destination)
        let again = await networkError { _ = try await relaunched.resumeDownload(restored).value }
        #expect(again?.code == .fileSystem, "\(String(describing: again))")
        #expect(directory.names.isEmpty)
    }

    @Test("resume data with a JSON body is not stored, and data of another format version is refused")
    func resumeDataThatCannotBeStored() throws {
        var endpoint = DownloadEndpoint.download("report")
        endpoint.body = .json(["id": 1])
        let withJSON = DownloadResumeData(
            endpoint: endpoint, destination: URL(fileURLWithPath: "/tmp/r"), overwrite: .fail,
            partialFile: URL(fileURLWithPath: "/tmp/.r.courier-download-1"), bytesReceived: 1, validator: nil,
            acceptsRanges: true)
        #expect(throws: EncodingError.self) { _ = try JSONEncoder().encode(withJSON) }

        endpoint.body = .form(["id": "1"])
        let stored =
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(
                    DownloadResumeData(
                        endpoint: endpoint, destination: URL(fileURLWithPath: "/tmp/r"), overwrite: .replace,
                        partialFile: URL(fileURLWithPath: "/tmp/.r.courier-download-1"), bytesReceived: 1,
                        validator: "\"v\"",
                        acceptsRanges: true))) as? [String: Any] ?? [:]
        let back = try JSONDecoder().decode(
            DownloadResumeData.self, from: JSONSerialization.data(withJSONObject: stored))
        #expect(back.overwrite == .replace && back.validator == "\"v\"")
        if case .form(let form) = back.endpoint.body { #expect(form["id"] == "1") } else { Issue.record("not a form") }
        func decodes(_ changes: [String: Any]) -> Bool {
            let changed = stored.merging(changes) { _, new in new }
            guard let data = try? JSONSerialization.data(withJSONObject: changed) else { return false }
            return (try? JSONDecoder().decode(DownloadResumeData.self, from: data)) != nil
        }
        #expect(decodes([:]))
        #expect(!decodes(["version": 2]))
        #expect(!decodes(["partialFile": "file:///etc/passwd"]), "a partial file elsewhere")
        #expect(!decodes(["partialFile": "file:///tmp/other/.r.courier-download-1"]), "in another folder")
        #expect(!decodes(["partialFile": "file:///tmp/link/../.r.courier-download-1"]), "through ..")
        #expect(!decodes(["partialFile": "https://example.com/tmp/.r.courier-download-1"]), "not a file URL")
        #expect(!decodes(["destination": "https://example.com/tmp/r"]))

        // A query pair's written form from storage is kept only when it is exactly that pair.
        var record = stored["endpoint"] as? [String: Any] ?? [:]
        record["query"] = [
            ["name": "q", "value": "1", "written": "q=1#cut"], ["name": "a", "value": "1", "written": "a=1&b=2"],
            ["name": "s", "value": "a+b", "written": "s=a+b"],
        ]
        let tampered = try JSONDecoder().decode(
            DownloadResumeData.self,
            from: JSONSerialization.data(withJSONObject: stored.merging(["endpoint": record]) { _, new in new }))
        #expect(tampered.endpoint.query.items.map(\.written) == [nil, nil, "s=a+b"])
    }

    @Test("the partial file is private (0600), and a symbolic link put in its place is never followed")
    func partialFileIsPrivate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let content = patternedBytes(8_000_000, seed: 22)
        let calls = Counter()
        let broken = Self.file(content, fault: .closeMidBody(afterBytes: Self.brokenAt))
        let whole = Self.file(content)
        backend.server.route("/v1/report") { try await calls.increment() == 1 ? broken($0) : whole($0) }
        let destination = directory.file("report.bin")
        let error = await networkError {
            _ = try await backend.client.download(.download("report"), to: destination).value
        }
        let resumeData = try #require(error?.resumeData)
        let attributes = try FileManager.default.attributesOfItem(atPath: resumeData.partialFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // Someone swaps the partial file for a link to a file of theirs.
        let victim = directory.file("victim.txt")
        try Data("victim".utf8).write(to: victim)
        try FileManager.default.removeItem(at: resumeData.partialFile)
        try FileManager.default.createSymbolicLink(at: resumeData.partialFile, withDestinationURL: victim)
        let resumed = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }

        #expect(resumed?.code == .fileSystem, "\(String(describing: resumed))")
        #expect(try Data(contentsOf: victim) == Data("victim".utf8), "the link's target is untouched")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("a server without range support restarts the download cleanly")
    func resumeWithoutRanges() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let content = patternedBytes(6_000_000, seed: 33)
        let broken = Self.file(content, supportsRanges: false, fault: .closeMidBody(afterBytes: Self.brokenAt))
        backend.server.route("/v1/report", handler: broken)
        let destination = directory.file("report.bin")
        let error = await networkError {
            _ = try await backend.client.download(.download("report"), to: destination).value
        }
        let resumeData = try #require(error?.resumeData)
        #expect(!resumeData.continuesWithRange, "Accept-Ranges: none")
        backend.server.route("/v1/report", handler: Self.file(content, supportsRanges: false))

        let file = try await backend.client.resumeDownload(resumeData).value

        #expect(try Data(contentsOf: destination) == content)
        #expect(file.status == 200 && file.resumedFrom == 0)
        #expect(backend.server.requests.last?.headers["Range"] == nil)
        #expect(directory.names == ["report.bin"])
    }

    @Test("a resource that changed (If-Range fails) is downloaded again from the start")
    func resumeAfterChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route(
            "/v1/report", handler: Self.file(patternedBytes(5_000_000), fault: .closeMidBody(afterBytes: Self.brokenAt))
        )
        let destination = directory.file("report.bin")
        let error = await networkError {
            _ = try await backend.client.download(.download("report"), to: destination).value
        }
        let resumeData = try #require(error?.resumeData)
        let changed = patternedBytes(4_000_000, seed: 99)
        backend.server.route("/v1/report", handler: Self.file(changed, etag: "\"v2\""))

        let file = try await backend.client.resumeDownload(resumeData).value

        #expect(backend.server.requests.last?.headers["If-Range"] == "\"v1\"")
        #expect(file.status == 200 && file.byteCount == 4_000_000)
        #expect(try Data(contentsOf: destination) == changed, "no stale byte of the old version survives")
    }

    @Test("an existing destination fails before sending unless replacing is asked for")
    func overwritePolicy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/f", handler: Self.file(Data("new".utf8)))
        let destination = directory.file("f.txt")
        try Data("old".utf8).write(to: destination)

        let error = await networkError { _ = try await backend.client.download(.download("f"), to: destination).value }
        #expect(error?.code == .fileSystem)
        #expect(backend.server.requests.isEmpty)
        #expect(try Data(contentsOf: destination) == Data("old".utf8))

        _ = try await backend.client.download(.download("f"), to: destination, overwrite: .replace).value
        #expect(try Data(contentsOf: destination) == Data("new".utf8))
        #expect(directory.names == ["f.txt"])
    }

    @Test("a cancelled download leaves no file at all")
    func cancellation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend(timeout: .seconds(60))
        defer { backend.server.stop() }
        let slow = Self.file(patternedBytes(1_000_000), fault: .drip(bytes: 1000, every: .milliseconds(20)))
        backend.server.route("/v1/slow", handler: slow)
        let task = backend.client.download(.download("slow"), to: directory.file("slow.bin"))
        for await step in task.progressUpdates() where step.completed > 0 { break }

        task.cancel()
        let error = await networkError { _ = try await task.value }

        #expect(error?.code == .cancelled && error?.resumeData == nil)
        #expect(directory.names.isEmpty)
    }

    // `client.send(.download("f"))` does not compile (scripts/doc-examples checks that); the
    // request inside a download endpoint, which only the package can reach, is refused too.
    @Test("a download endpoint's request sent with send(_:) is refused clearly")
    func sendRefusesDownloads() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/f", handler: Self.file(Data("x".utf8)))

        let error = await networkError { _ = try await backend.client.send(DownloadEndpoint.download("f").endpoint) }

        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("download(_:to:)") == true)
    }
}

/// A download onto a full disk: a 1 MB tmpfs the test mounts (root only).
@Suite struct FullDiskTests {
    @Test(
        "a disk that fills up fails the download with fileSystem; nothing is left behind",
        .enabled(if: getuid() == 0, "needs root to mount a small tmpfs"))
    func fullDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mounted = try Subprocess.exitStatus(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.url.path])
        try #require(mounted == 0, "mount tmpfs")
        defer { _ = try? Subprocess.exitStatus("/bin/umount", [directory.url.path]) }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/big") { _ in
            .init(status: 200, headers: ["Content-Type": "application/octet-stream"], body: patternedBytes(4_000_000))
        }

        let error = await networkError {
            _ = try await backend.client.download(.download("big"), to: directory.file("big.bin")).value
        }

        #expect(error?.code == .fileSystem)
        #expect(error?.resumeData == nil)
        #expect(directory.names.isEmpty, "neither the destination nor a partial file")
    }
}
