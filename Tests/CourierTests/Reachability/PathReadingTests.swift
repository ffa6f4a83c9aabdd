import Testing

@testable import Courier

/// How `PathReachability` reads an Apple network path.
@Suite struct PathReadingTests {
    @Test("a satisfied path is online with the kind of its first interface: Wi-Fi, cellular, wired, else other")
    func satisfied() {
        #expect(PathReading.satisfied.status(using: [.cellular, .wifi]) == .online(.wifi))
        #expect(PathReading.satisfied.status(using: [.cellular]) == .online(.cellular))
        #expect(PathReading.satisfied.status(using: [.wired]) == .online(.wired))
        #expect(PathReading.satisfied.status(using: []) == .online(.other))
    }

    @Test("a path that requires a connection is unknown, which holds no request back; unsatisfied is offline")
    func notSatisfied() {
        #expect(PathReading.requiresConnection.status(using: [.cellular]) == .unknown)
        #expect(PathReading.unsatisfied.status(using: [.wifi]) == .offline)
    }
}
