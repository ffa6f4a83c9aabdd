import Courier
import CourierTesting
import Foundation

/// A recording file in a folder of its own, removed by `remove()`.
struct TemporaryRecording {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-recording-\(UUID())")
    var file: URL { folder.appendingPathComponent("traffic.har") }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// The recording's text as written.
    func text() throws -> String { String(decoding: try Data(contentsOf: file), as: UTF8.self) }

    /// The recording as read back.
    func archive() throws -> HTTPArchive { try HTTPArchive(jsonData: Data(contentsOf: file)) }

    /// A transport that records every exchange over the suite's transport.
    func recorder(volatile: VolatileParts = .none) throws -> RecordingTransport {
        try RecordingTransport(
            file: file, mode: .recordAll,
            wrapping: TestTransport.make() ?? NetworkClient.Configuration.defaultTransport(), volatile: volatile)
    }

    /// A transport that replays, wrapping a transport that fails the test if anything reaches it.
    func replayer(volatile: VolatileParts = .none) throws -> (RecordingTransport, MockTransport) {
        let spy = MockTransport { _ in throw NetworkError(.transport, "The replay sent a request.") }
        return (try RecordingTransport(file: file, mode: .replay, wrapping: spy, volatile: volatile), spy)
    }
}

/// A client of `baseURL` over `transport`.
func recordingClient(
    _ baseURL: URL, _ transport: any Transport, configure: (inout NetworkClient.Configuration) -> Void = { _ in }
) -> NetworkClient {
    var configuration = NetworkClient.Configuration(
        baseURL: URL(string: "v1/", relativeTo: baseURL)!.absoluteURL, timeout: .seconds(30) * TestTiming.scale,
        transport: transport)
    configure(&configuration)
    return NetworkClient(configuration: configuration)
}
