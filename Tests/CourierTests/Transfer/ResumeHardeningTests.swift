import Courier
import CourierTesting
import Foundation
import Testing

/// A resumed download trusts nothing the server says about ranges and lengths: no arithmetic on
/// them may trap, and an answer that does not continue the file is an error.
@Suite struct ResumeHardeningTests {
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
        let backend = try FaultBackend(timeout: .seconds(5)) { connection in
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
}
