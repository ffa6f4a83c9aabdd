import Courier
import CourierTesting
import Foundation
import Testing

/// Answers that end the process inside Linux `URLSession` (FoundationNetworking), before
/// Courier sees them, and that CurlTransport answers with an error or the right value. The exit
/// tests pin each fault, so the documentation changes when FoundationNetworking mends it.
///
/// - A `Content-Length` from 2^63 - 512 up: FoundationNetworking reads it as a `Double` and
///   converts it to `Int64` in its own header callback, which traps.
/// - A chunked body's trailer shaped like a status line: FoundationNetworking takes it for the
///   start of a new answer, and stops at "Transfer completed, but there's no response".
@Suite struct FoundationNetworkingTrapTests {
    static let hugeLength =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9223372036854775807\r\n\r\nhi"
    static let statusLineTrailer =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n0\r\nHTTP/1.1 500 No: 1\r\n\r\n"

    #if os(Linux)
        /// How a Swift runtime trap ends a process: by the trap signal, so that anything else
        /// (a sanitizer's report ends the process with a failing status) fails the test.
        #if arch(x86_64)
            static let trapped = ExitTest.Condition.signal(SIGILL)
        #else
            static let trapped = ExitTest.Condition.signal(SIGTRAP)
        #endif

        @Test("CurlTransport: a 2^63-1 Content-Length is an error in memory and on disk, never a trap")
        func curlAnswersWithAnError() async throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let server = try FaultServer([.readRequest, .send(Self.hugeLength), .close])
            defer { server.stop() }
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL, timeout: .seconds(5), transport: try CurlTransport()))

            let inMemory = await networkError {
                _ = try await client.send(Endpoint<HTTPResponse>(method: .get, path: "x", decoding: .response))
            }
            #expect(inMemory?.code == .responseTooLarge, "\(String(describing: inMemory))")

            // A download has no limit unless its endpoint sets one: the body ends early.
            let destination = directory.file("file.bin")
            let download = await networkError { _ = try await client.download(.download("x"), to: destination).value }
            #expect(download?.code == .transport, "\(String(describing: download))")
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            download?.resumeData?.discard()
        }

        @Test("Linux URLSession: FoundationNetworking traps on a 2^63-1 Content-Length (out of Courier's reach)")
        func hugeLengthTraps() async {
            await #expect(processExitsWith: Self.trapped) { await Self.sendOnURLSession(Self.hugeLength) }
        }

        @Test("CurlTransport: a trailer shaped like a status line leaves the answer as it was")
        func curlIgnoresStatusLineTrailer() async throws {
            let server = try FaultServer([.readRequest, .send(Self.statusLineTrailer), .close])
            defer { server.stop() }
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL, timeout: .seconds(5), transport: try CurlTransport()))
            let response = try await client.send(Endpoint<HTTPResponse>(method: .get, path: "x", decoding: .response))
            #expect(response.status == 200)
            #expect(response.body == Data("hello".utf8))
        }

        @Test("Linux URLSession: FoundationNetworking stops on a status-line trailer (out of Courier's reach)")
        func statusLineTrailerTraps() async {
            await #expect(processExitsWith: Self.trapped) { await Self.sendOnURLSession(Self.statusLineTrailer) }
        }

        /// Sends a GET through `URLSessionTransport` to a server that answers `answer`, in an
        /// exit test's process. Returning at all, with any answer or error, means the process
        /// survived: the exit test fails. So does a server that cannot start (it exits cleanly).
        static func sendOnURLSession(_ answer: String) async {
            guard let server = try? FaultServer([.readRequest, .send(answer), .close]) else { exit(0) }
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL, timeout: .seconds(5), transport: URLSessionTransport()))
            _ = try? await client.send(Endpoint<HTTPResponse>(method: .get, path: "x", decoding: .response))
            server.stop()
        }
    #endif
}
