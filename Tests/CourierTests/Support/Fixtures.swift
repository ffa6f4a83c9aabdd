import Courier
import CourierTesting
import Foundation

/// A payload used across suites.
struct Order: Codable, Sendable, Equatable {
    let id: Int
    let title: String
}

/// A loopback server and a client pointed at it, for over-the-wire tests. The default timeout
/// only ends a hang: long, and stretched by `TestTiming.scale`.
struct Backend {
    let server: LoopbackServer
    let client: NetworkClient

    init(
        basePath: String = "v1/", timeout: Duration = .seconds(30) * TestTiming.scale,
        configure: (inout NetworkClient.Configuration) -> Void = { _ in }
    ) throws {
        server = try LoopbackServer()
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: basePath, relativeTo: server.baseURL)!.absoluteURL, timeout: timeout,
            transport: TestTransport.make())
        configure(&configuration)
        client = NetworkClient(configuration: configuration)
    }
}

/// A fault server and a client pointed at it, for tests of broken and hostile servers. The
/// default timeout only ends a hang, as `Backend`'s does.
struct FaultBackend {
    let server: FaultServer
    let client: NetworkClient

    init(
        timeout: Duration = .seconds(30) * TestTiming.scale,
        configure: (inout NetworkClient.Configuration) -> Void = { _ in },
        script: @escaping @Sendable (_ connection: Int) -> [FaultServer.Step]
    ) throws {
        server = try FaultServer(script: script)
        var configuration = NetworkClient.Configuration(
            baseURL: server.baseURL, timeout: timeout, transport: TestTransport.make())
        configure(&configuration)
        client = NetworkClient(configuration: configuration)
    }

    /// Every connection runs `steps`.
    init(
        timeout: Duration = .seconds(30) * TestTiming.scale,
        configure: (inout NetworkClient.Configuration) -> Void = { _ in },
        _ steps: [FaultServer.Step]
    ) throws {
        try self.init(timeout: timeout, configure: configure) { _ in steps }
    }
}

/// Runs `body` and returns the `NetworkError` it throws, or `nil` when it throws none or
/// another error.
func networkError(_ body: () async throws -> Void) async -> NetworkError? {
    do {
        try await body()
        return nil
    } catch let error as NetworkError {
        return error
    } catch {
        return nil
    }
}

extension LoopbackServer.Response {
    /// A `204 No Content`.
    static var empty204: Self { .init(status: 204) }
}

/// A thread-safe list of strings. `@unchecked Sendable`: `entries` is guarded by `lock`.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    func append(_ entry: String) { lock.withLock { entries.append(entry) } }
    var all: [String] { lock.withLock { entries } }
}

/// A switch a test flips for its server's routes. `@unchecked Sendable`: `value` is guarded by
/// `lock`.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    func clear() { lock.withLock { value = false } }
}

/// A clock a test moves by hand, from a whole second. `@unchecked Sendable`: `date` is guarded
/// by `lock`.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var date = Date(timeIntervalSince1970: 1_700_000_000)
    var now: Date { lock.withLock { date } }
    func advance(_ seconds: TimeInterval) { lock.withLock { date += seconds } }
}

/// A thread-safe counter. `@unchecked Sendable`: `value` is guarded by `lock`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// The value now.
    var current: Int { lock.withLock { value } }

    /// Adds one and returns the new value.
    func increment() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

/// How much slower than usual the suite runs: `COURIER_TEST_TIME_SCALE`, a whole number from 1
/// (when unset), which `scripts/sanitize` sets for instrumented code. A test that gives requests
/// a deadline only so that a hang ends multiplies it by this; a deadline a test is about stays.
enum TestTiming {
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["COURIER_TEST_TIME_SCALE"] ?? "") ?? 1)
}

/// The transport the suite runs against: `COURIER_TEST_TRANSPORT=urlsession` or `curl` forces
/// one; otherwise the library's default for this platform.
enum TestTransport {
    /// Whether the suite runs on `URLSessionTransport`.
    static var isURLSession: Bool { ProcessInfo.processInfo.environment["COURIER_TEST_TRANSPORT"] == "urlsession" }

    /// The transport's name, for messages.
    static var name: String { isURLSession ? "URLSession" : "curl" }

    static func make() -> (any Transport)? {
        switch ProcessInfo.processInfo.environment["COURIER_TEST_TRANSPORT"] {
        case "urlsession": return URLSessionTransport()
        #if os(Linux)
            case "curl": return try? CurlTransport()
        #endif
        default: return nil
        }
    }
}
