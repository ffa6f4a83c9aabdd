import Foundation
import Testing

@testable import Courier
@testable import CourierTesting

/// Where the trait's tests keep their recordings.
private let traitFolder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-trait-\(UUID())")

/// The `.recordedTraffic` trait: each test gets its own recording, named after it.
@Suite(.recordedTraffic(in: traitFolder)) struct RecordingTraitTests {
    static let folder = traitFolder

    @Test("a test under the trait records to a file named after it, and replays from it")
    func recordsUnderItsName() async throws {
        let server = try LoopbackServer()
        server.route("/v1/hello") { _ in .envelope(data: "hello") }
        let recorder = try RecordingTransport.forCurrentTest(
            wrapping: TestTransport.make() ?? NetworkClient.Configuration.defaultTransport(), mode: .recordAll)
        #expect(
            recorder.file.path == Self.folder.path + "/RecordingTraitTests/RecordingTraitTests/recordsUnderItsName.har")
        let live: String = try await recordingClient(server.baseURL, recorder).send(.get("hello"))
        server.stop()
        let replayer = try RecordingTransport.forCurrentTest(mode: .replay)
        let replayed: String = try await recordingClient(server.baseURL, replayer).send(.get("hello"))
        #expect([live, replayed] == ["hello", "hello"])
        try? FileManager.default.removeItem(at: Self.folder.appendingPathComponent("RecordingTraitTests"))
    }

    @Test("a second test under the trait has a recording of its own")
    func hasItsOwnFile() throws {
        let transport = try RecordingTransport.forCurrentTest(mode: .replay)
        #expect(transport.file.lastPathComponent == "hasItsOwnFile.har")
    }
}

@Suite struct RecordingTraitAbsentTests {
    @Test("without a folder, recordings go in Recordings beside the test's source file", .recordedTraffic)
    func besideTheSource() throws {
        let transport = try RecordingTransport.forCurrentTest(mode: .replay)
        let source = URL(fileURLWithPath: #filePath)
        #expect(
            transport.file.path
                == source.deletingLastPathComponent().path
                + "/Recordings/RecordingTraitTests/RecordingTraitAbsentTests/besideTheSource.har"
        )
    }

    @Test("a parameterized test is told to name a file per case", .recordedTraffic, arguments: [1, 2])
    func parameterized(_ number: Int) {
        let error = #expect(throws: NetworkError.self) { _ = try RecordingTransport.forCurrentTest() }
        #expect(error?.message.contains("parameterized") == true)
    }

    @Test("a test without the trait is told it has no recording")
    func withoutTrait() {
        let error = #expect(throws: NetworkError.self) { _ = try RecordingTransport.forCurrentTest() }
        #expect(error?.code == .invalidRequest)
    }

    @Test(
        "test names become file names",
        arguments: [
            ("ordersLoad()", "ordersLoad"), ("a name with spaces", "a_name_with_spaces"), ("../up()", "___up"),
            ("", "test"),
        ])
    func fileNames(_ name: String, _ expected: String) {
        #expect(RecordedTrafficTrait.fileName(name) == expected)
    }
}
