#if canImport(Testing)
    import Courier
    import Foundation
    import Testing

    /// A Swift Testing trait that gives each test its own recording, named after the test:
    /// `Recordings/<test file>/<suite>/<test function>.har` beside the test's source file (for a
    /// test outside a suite, `Recordings/<test file>/<test function>.har`), or in a folder you
    /// name. The test makes its transport with
    /// ``RecordingTransport/forCurrentTest(wrapping:mode:volatile:redactor:streamReplay:)``.
    ///
    /// ```swift
    /// @Test(.recordedTraffic) func ordersLoad() async throws {
    ///     let transport = try RecordingTransport.forCurrentTest(wrapping: NetworkClient.Configuration.defaultTransport())
    ///     let client = NetworkClient(configuration: .init(baseURL: backend, transport: transport))
    ///     let orders = try await client.send(.orders(page: 1))
    ///     #expect(!orders.isEmpty)
    /// }
    /// ```
    ///
    /// On a suite it applies to every test in it. A parameterized test has no recording of its
    /// own (its cases, run at once, would overwrite one another's): give each case a file with
    /// ``RecordingTransport/init(file:mode:wrapping:volatile:redactor:streamReplay:)``. Make one
    /// transport per test: two recording into one file at once overwrite each other.
    public struct RecordedTrafficTrait: TestTrait, SuiteTrait, TestScoping {
        /// The folder recordings go in; `nil` for `Recordings` beside the test's source file.
        public let directory: URL?

        /// Applies to every test of a suite it marks.
        public var isRecursive: Bool { true }

        /// Runs the test with its recording's file known to
        /// ``RecordingTransport/forCurrentTest(wrapping:mode:volatile:redactor:streamReplay:)``.
        /// - Parameters:
        ///   - test: The test.
        ///   - testCase: The test's case.
        ///   - function: Runs the test.
        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            guard !test.isSuite else { return try await function() }
            let scope = RecordingTransport.TestScope(
                file: file(for: test), isParameterized: testCase?.isParameterized ?? test.isParameterized)
            try await RecordingTransport.$currentTest.withValue(scope) { try await function() }
        }

        /// `<folder>/<test file>/<suite>/<test function>.har` (nested suites are nested
        /// folders; a test outside a suite has none).
        func file(for test: Test) -> URL {
            let source = URL(fileURLWithPath: test.sourceLocation.filePath)
            var url = directory ?? source.deletingLastPathComponent().appendingPathComponent("Recordings")
            for folder in [source.deletingPathExtension().lastPathComponent] + test.id.nameComponents.dropLast() {
                url.appendPathComponent(Self.fileName(folder))
            }
            return url.appendingPathComponent(Self.fileName(test.name) + ".har")
        }

        /// A test's name as a file name: `ordersLoad()` is `ordersLoad`; what a file name cannot
        /// hold becomes `_`.
        static func fileName(_ name: String) -> String {
            let base = name.hasSuffix("()") ? String(name.dropLast(2)) : name
            let kept = base.unicodeScalars.map { scalar -> Character in
                CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
            }
            return kept.isEmpty ? "test" : String(kept)
        }
    }

    extension Trait where Self == RecordedTrafficTrait {
        /// Gives each test its own recording in `Recordings` beside its source file.
        public static var recordedTraffic: Self { RecordedTrafficTrait(directory: nil) }

        /// Gives each test its own recording in `directory`.
        /// - Parameter directory: The folder the recordings go in.
        /// - Returns: The trait.
        public static func recordedTraffic(in directory: URL) -> Self { RecordedTrafficTrait(directory: directory) }
    }
#endif

extension RecordingTransport {
    /// The recording of the test running now.
    struct TestScope: Sendable {
        let file: URL
        let isParameterized: Bool
    }

    /// The recording of the test running now, set by the `.recordedTraffic` trait.
    @TaskLocal static var currentTest: TestScope?

    /// A transport over the recording of the test running now (see `RecordedTrafficTrait`).
    /// - Parameters:
    ///   - inner: The transport that reaches the backend when recording.
    ///   - mode: What to do with requests; `nil` reads `COURIER_RECORDING`, and replays without it.
    ///   - volatile: Parameters and JSON fields left out when matching.
    ///   - redactor: Names hidden in the recording beyond the client's redactor's.
    ///   - streamReplay: How a recorded stream is played back.
    /// - Returns: The transport.
    /// - Throws: `NetworkError.Code.invalidRequest` outside a test with the trait or in a
    ///   parameterized test, and what
    ///   ``RecordingTransport/init(file:mode:wrapping:volatile:redactor:streamReplay:)`` throws.
    public static func forCurrentTest(
        wrapping inner: (any Transport)? = nil, mode: RecordingMode? = nil, volatile: VolatileParts = .none,
        redactor: Redactor = Redactor(names: []), streamReplay: StreamReplay = .asFastAsPossible
    ) throws(NetworkError) -> RecordingTransport {
        guard let scope = currentTest else {
            throw NetworkError(.invalidRequest, "Only a test marked with the .recordedTraffic trait has a recording.")
        }
        guard !scope.isParameterized else {
            throw NetworkError(
                .invalidRequest,
                "The cases of a parameterized test would share one recording: give each a file with RecordingTransport(file:)."
            )
        }
        let file = scope.file
        return try RecordingTransport(
            file: file, mode: mode, wrapping: inner, volatile: volatile, redactor: redactor, streamReplay: streamReplay)
    }
}
