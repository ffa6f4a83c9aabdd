import Courier
import CourierTesting
import Foundation
import Testing

/// A resumed download trusts nothing the server says about ranges and lengths: no arithmetic on
/// them may trap, and an answer that does not continue the file is an error.
@Suite struct ResumeHardeningTests {
    /// Only a bound on a hang: no answer here waits for it. Generous, since the run's first
    /// seconds, when every suite starts at once on two cores, held these transfers past 5 s.
    static let timeout: Duration = .seconds(20) * TestTiming.scale

    /// The first attempt breaks after 2,000 of 4,000 bytes, so the resume asks for byte 2,000.
    static func brokenFirstAttempt() -> [FaultServer.Step] {
        [
            .readRequest,
            .send("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 4000\r\n\r\n"),
            .send(Data(repeating: 1, count: 2000)),
            .close,
        ]
    }

    // 9223372036854775000 + 2000 overflows Int64. (FoundationNetworking itself traps on any
    // Content-Length from 2^63 - 512 up, before Courier sees the answer; see URLSessionTransport.)
    static let hostileResumes: [String] = [
        "Content-Range: bytes 2000-2099/*\r\nContent-Length: 9223372036854775000",
        "Content-Range: bytes 2000-9223372036854775807/*\r\nContent-Length: 9223372036854773808",
        "Content-Range: bytes 2000-2099/9223372036854775807\r\nContent-Length: 100",
        "Content-Range: bytes 2000-2099/-5\r\nContent-Length: 100",
        "Content-Range: bytes 1000-2099/*\r\nContent-Length: 1100",
        "Content-Range: bytes 2000-1999/*\r\nContent-Length: 0",
        "Content-Range: bytes -2000-2099/*\r\nContent-Length: 100",
        "Content-Length: 100",
    ]

    @Test("a hostile 206 to a resume ends in an error, never a trap", arguments: hostileResumes)
    func hostileResume(headers: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try FaultBackend(timeout: Self.timeout) { connection in
            connection == 0
                ? Self.brokenFirstAttempt()
                : [
                    .readRequest, .send("HTTP/1.1 206 Partial Content\r\n\(headers)\r\n\r\n"), .send(Data(count: 100)),
                    .close,
                ]
        }
        defer { backend.server.stop() }
        let destination = directory.file("file.bin")
        let first = await networkError { _ = try await backend.client.download(.download("f"), to: destination).value }
        let resumeData = try #require(first?.resumeData)
        #expect(resumeData.bytesReceived == 2000)

        let error = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }

        // The range or length is refused, or (for a range that runs to the end of Int64) the
        // connection closes early: either way an error, and nothing at the destination.
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(backend.server.requestHeads.last?.headers["Range"] == "bytes=2000-")
        error?.resumeData?.discard()
    }

    /// A backend whose first connection breaks after 2,000 bytes and whose later ones run
    /// `resume(n)` (n counts from 1), with the first attempt's resume data.
    static func brokenDownload(
        in directory: TemporaryDirectory, resume: @escaping @Sendable (Int) -> [FaultServer.Step]
    ) async throws -> (FaultBackend, URL, DownloadResumeData) {
        let backend = try FaultBackend(timeout: Self.timeout) { connection in
            connection == 0 ? Self.brokenFirstAttempt() : resume(connection)
        }
        let destination = directory.file("file.bin")
        let first = await networkError { _ = try await backend.client.download(.download("f"), to: destination).value }
        let resumeData = try #require(first?.resumeData)
        return (backend, destination, resumeData)
    }

    static let rest = "Content-Range: bytes 2000-3999/4000\r\n"

    @Test("a 206 that ends cleanly before its range is an error")
    func shortRange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let answer = Self.rest + "Transfer-Encoding: chunked\r\n\r\n64\r\n" + String(repeating: "b", count: 100)
        let (backend, destination, resumeData) = try await Self.brokenDownload(in: directory) { _ in
            [.readRequest, .send("HTTP/1.1 206 Partial Content\r\n" + answer + "\r\n0\r\n\r\n"), .waitForHangUp]
        }
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        error?.resumeData?.discard()
    }

    @Test("an encoded 206 continues byte for byte where the bytes are not decoded, else is an error")
    func encodedRange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // An object stored compressed (gzip metadata on a CDN) answers ranges of its stored bytes.
        let answer = Self.rest + "Content-Encoding: gzip\r\nContent-Length: 2000\r\n\r\n"
        let (backend, destination, resumeData) = try await Self.brokenDownload(in: directory) { _ in
            [.readRequest, .send("HTTP/1.1 206 Partial Content\r\n" + answer), .send(Data(repeating: 2, count: 2000))]
        }
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }
        if TestTransport.isURLSession {
            // FoundationNetworking decodes whatever it is sent: offsets would no longer match.
            #expect(error?.code == .transport, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            error?.resumeData?.discard()
        } else {
            #expect(error == nil, "\(String(describing: error))")
            let expected = Data(repeating: 1, count: 2000) + Data(repeating: 2, count: 2000)
            #expect(try Data(contentsOf: destination) == expected)
        }
    }

    @Test("a partial file shorter than its resume offset is never filled with zeros")
    func shortPartialFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (backend, destination, resumeData) = try await Self.brokenDownload(in: directory) { _ in
            [
                .readRequest, .send("HTTP/1.1 206 Partial Content\r\n\(Self.rest)Content-Length: 2000\r\n\r\n"),
                .send(Data(repeating: 2, count: 2000)), .waitForHangUp,
            ]
        }
        defer { backend.server.stop() }
        let partial = try FileHandle(forWritingTo: resumeData.partialFile)
        try partial.truncate(atOffset: 1000)
        try partial.close()
        let error = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }
        #expect(error?.code == .fileSystem, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("a resume that gets no answer, or an error status, keeps the partial file for the next try")
    func failedResumeKeepsPartialFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (backend, destination, resumeData) = try await Self.brokenDownload(in: directory) { connection in
            connection == 1
                ? [.readRequest, .send("HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy"), .close]
                : [
                    .readRequest, .send("HTTP/1.1 206 Partial Content\r\n\(Self.rest)Content-Length: 2000\r\n\r\n"),
                    .send(Data(repeating: 2, count: 2000)), .waitForHangUp,
                ]
        }
        defer { backend.server.stop() }
        // A server that is gone: the connection is refused. The port stays bound (and refuses)
        // for the whole test, so no other test's server can take it meanwhile.
        let gone = RefusingPort()
        let offline = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(gone.port)/")!, timeout: .seconds(5),
                transport: TestTransport.make()))

        let refused = await networkError { _ = try await offline.resumeDownload(resumeData).value }
        #expect(refused?.status == nil, "\(String(describing: refused))")
        let busy = await networkError {
            _ = try await backend.client.resumeDownload(try #require(refused?.resumeData)).value
        }
        #expect(busy?.status == 503, "\(String(describing: busy))")
        let again = try #require(busy?.resumeData)
        #expect(again.bytesReceived == 2000 && again.partialFile == resumeData.partialFile)

        let file = try await backend.client.resumeDownload(again).value
        #expect(file.resumedFrom == 2000)
        #expect(try Data(contentsOf: destination) == Data(repeating: 1, count: 2000) + Data(repeating: 2, count: 2000))
    }

    @Test("a resume refused for good (416) drops the partial file, so the next download starts over")
    func refusedResumeDropsPartialFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (backend, _, resumeData) = try await Self.brokenDownload(in: directory) { _ in
            [.readRequest, .send("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\n\r\n"), .close]
        }
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.resumeDownload(resumeData).value }
        #expect(error?.status == 416, "\(String(describing: error))")
        #expect(error?.resumeData == nil)
        #expect(!FileManager.default.fileExists(atPath: resumeData.partialFile.path))
    }
}
