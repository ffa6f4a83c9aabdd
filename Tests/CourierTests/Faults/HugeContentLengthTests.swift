import Courier
import CourierTesting
import Foundation
import Testing

/// A `Content-Length` near 2^63: CurlTransport answers with an error, while Linux `URLSession`
/// kills the process before Courier sees the answer (FoundationNetworking reads the length as
/// a `Double` and converts it to `Int64` in its own header callback, which traps from
/// 2^63 - 512 up). The second test pins that fault, so the documentation changes when
/// FoundationNetworking mends it.
@Suite struct HugeContentLengthTests {
    static let hugeLength =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9223372036854775807\r\n\r\nhi"

    #if os(Linux)
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
        func foundationNetworkingTraps() async {
            await #expect(processExitsWith: .failure) {
                let server = try FaultServer([.readRequest, .send(HugeContentLengthTests.hugeLength), .close])
                let transport = URLSessionTransport()
                let client = NetworkClient(
                    configuration: .init(baseURL: server.baseURL, timeout: .seconds(5), transport: transport))
                // Any answer at all, error or not, means the process survived: the exit test fails.
                _ = try? await client.send(Endpoint<HTTPResponse>(method: .get, path: "x", decoding: .response))
                server.stop()
            }
        }
    #endif
}
