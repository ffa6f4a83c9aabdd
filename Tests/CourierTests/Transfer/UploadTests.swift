import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Large multipart bodies through a temporary file, upload progress, and the handle.
@Suite struct UploadTests {
    private struct Media: Codable, Sendable, Equatable {
        let id: Int
    }

    /// A form above its memory threshold, with its temporary files going to `directory`.
    private func largeForm(in directory: TemporaryDirectory, size: Int = 3_000_000) throws -> MultipartForm {
        let source = directory.file("video.mp4")
        try patternedBytes(size, seed: 5).write(to: source)
        var form = MultipartForm(fields: ["title": "clip"])
        form.append(name: "video", fileAt: source)
        form.memoryThreshold = 1_000_000
        let scratch = directory.file("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        form.temporaryDirectory = scratch
        return form
    }

    private func scratchNames(_ directory: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.file("scratch").path)) ?? []
    }

    @Test("a body above the threshold goes through a temporary file, which is gone afterwards")
    func temporaryFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let seenDuringUpload = Log()
        backend.server.route("/v1/media") { [directory] _ in
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.file("scratch").path)) ?? [] {
                seenDuringUpload.append(name)
            }
            return .envelope(data: Media(id: 1))
        }
        let form = try largeForm(in: directory)

        let media = try await backend.client.upload(Endpoint<Media>.post("media", body: .multipart(form))).value

        #expect(media == Media(id: 1))
        #expect(seenDuringUpload.all.count == 1)
        #expect(seenDuringUpload.all.first?.hasPrefix("courier-upload-") == true)
        #expect(scratchNames(directory).isEmpty, "the temporary file is removed after success")
        let request = try #require(backend.server.requests.first)
        let parts = try #require(request.multipartParts)
        #expect(parts.map(\.name) == ["title", "video"])
        #expect(parts[1].content == patternedBytes(3_000_000, seed: 5))
        #expect(request.headers["Content-Length"] == String(request.body.count) && !request.wasChunked)
    }

    @Test("the temporary file is removed after a failure")
    func temporaryFileAfterFailure() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in .init(status: 500) }

        let error = await networkError {
            _ = try await backend.client.upload(
                Endpoint<Media>.post("media", body: .multipart(try largeForm(in: directory)))
            ).value
        }

        #expect(error?.code == .httpStatus)
        #expect(backend.server.requests.count == 1)
        #expect(scratchNames(directory).isEmpty)
    }

    @Test("cancelling the handle stops the upload and removes the temporary file")
    func temporaryFileAfterCancellation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend(timeout: .seconds(60))
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in LoopbackServer.Response(status: 200).delayed(by: .seconds(30)) }
        let task = backend.client.upload(
            Endpoint<Media>.post("media", body: .multipart(try largeForm(in: directory))))
        let arrived = await backend.server.waitForEvents(timeout: .seconds(20)) { events in
            events.contains { if case .received = $0 { true } else { false } }
        }
        #expect(arrived)
        #expect(scratchNames(directory).count == 1, "the body is on disk while the server holds the request")

        task.cancel()
        let error = await networkError { _ = try await task.value }

        #expect(error?.code == .cancelled)
        #expect(scratchNames(directory).isEmpty)
    }

    @Test("cancelling the task that awaits the value stops the upload")
    func awaitingTaskCancellation() async throws {
        let backend = try Backend(timeout: .seconds(60))
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in LoopbackServer.Response(status: 200).delayed(by: .seconds(30)) }
        var form = MultipartForm()
        form.append(name: "f", data: Data("x".utf8), filename: "x.txt")
        let transfer = backend.client.upload(Endpoint<Media>.post("media", body: .multipart(form)))
        let waiter = Task { try await transfer.value }
        let arrived = await backend.server.waitForEvents(timeout: .seconds(20)) { events in
            events.contains { if case .received = $0 { true } else { false } }
        }
        #expect(arrived)

        waiter.cancel()
        let error = await networkError { _ = try await waiter.value }

        #expect(error?.code == .cancelled)
        let hungUp = await backend.server.waitForEvents(timeout: .seconds(20)) { events in
            events.contains { if case .clientClosedEarly = $0 { true } else { false } }
        }
        #expect(hungUp, "the connection was closed, not left running")
    }

    @Test("upload progress knows its total before the first byte goes: 0 of the body's length, not a bare 0")
    func progressKnowsItsTotal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Nothing listens: the body is made and measured, and no byte of it goes.
        let refusing = RefusingPort()
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(refusing.port)/")!, transport: TestTransport.make()))
        let file = directory.file("backup.bin")
        try patternedBytes(300_000).write(to: file)
        let task = client.upload(
            Endpoint<Media>.put("backup", body: .file(file, contentType: "application/octet-stream")))

        let error = await networkError { _ = try await task.value }

        #expect(error?.code == .transport)
        #expect(task.currentProgress == TransferProgress(completed: 0, expected: 300_000))
        #expect(task.currentProgress.description == "0.0 of 0.3 MB")
    }

    @Test("upload progress is monotonic and ends at the body's length")
    func progress() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in .envelope(data: Media(id: 2)) }
        let task = backend.client.upload(Endpoint<Media>.post("media", body: .multipart(try largeForm(in: directory))))
        let seen = collect(task.progressUpdates())

        _ = try await task.value
        let values = await seen.value

        let bodyLength = Int64(try #require(backend.server.requests.first).body.count)
        #expect(values.count >= 2, "at least the start and the end")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        #expect(values.last == TransferProgress(completed: bodyLength, expected: bodyLength))
        #expect(task.currentProgress.fraction == 1)
    }
}
