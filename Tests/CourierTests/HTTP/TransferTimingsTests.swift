import Foundation
import Testing

@testable import Courier

/// The timings `URLSessionTransport` reads from Apple's transaction metrics, checked here
/// with the dates such metrics carry.
@Suite struct TransferTimingsTests {
    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func at(_ milliseconds: Double) -> Date { start.addingTimeInterval(milliseconds / 1000) }

    @Test("each phase counts from the start of the exchange")
    func newConnection() throws {
        let timings = try #require(
            TransferTimings(
                start: Self.start, nameLookupEnd: Self.at(2), connectEnd: Self.at(5), tlsEnd: Self.at(11),
                firstByte: Self.at(30), end: Self.at(42.5)))
        #expect(timings.nameLookup == .milliseconds(2))
        #expect(timings.connect == .milliseconds(5))
        #expect(timings.tlsHandshake == .milliseconds(11))
        #expect(timings.firstByte == .milliseconds(30))
        #expect(timings.total == .microseconds(42_500))
    }

    @Test("a reused connection has no lookup, connect or TLS phases: they count as zero")
    func reusedConnection() throws {
        let timings = try #require(
            TransferTimings(
                start: Self.start, nameLookupEnd: nil, connectEnd: nil, tlsEnd: nil, firstByte: Self.at(3),
                end: Self.at(4)))
        #expect(timings.nameLookup == .zero && timings.connect == .zero && timings.tlsHandshake == .zero)
        #expect(timings.firstByte == .milliseconds(3))
        #expect(timings.total == .milliseconds(4))
    }

    @Test("no timings without a start or an end, or with an end before the start; wild dates never trap")
    func incomplete() {
        #expect(
            TransferTimings(start: nil, nameLookupEnd: nil, connectEnd: nil, tlsEnd: nil, firstByte: nil, end: .now)
                == nil)
        #expect(
            TransferTimings(start: .now, nameLookupEnd: nil, connectEnd: nil, tlsEnd: nil, firstByte: nil, end: nil)
                == nil)
        #expect(
            TransferTimings(
                start: Self.start, nameLookupEnd: nil, connectEnd: nil, tlsEnd: nil, firstByte: nil, end: Self.at(-1))
                == nil)
        let wild = TransferTimings(
            start: .distantPast, nameLookupEnd: Self.at(-5), connectEnd: nil, tlsEnd: nil, firstByte: nil,
            end: .distantFuture)
        #expect(wild?.total == .seconds(32_000_000))
        let infinite = Date(timeIntervalSinceReferenceDate: .infinity)
        #expect(
            TransferTimings(
                start: Self.start, nameLookupEnd: nil, connectEnd: nil, tlsEnd: nil, firstByte: nil, end: infinite)
                == nil)
        let phase = TransferTimings(
            start: Self.start, nameLookupEnd: infinite, connectEnd: nil, tlsEnd: nil, firstByte: nil, end: Self.at(1))
        #expect(phase?.nameLookup == .zero)
    }

    @Test(
        "the HTTP version from the protocol name",
        arguments: [
            ("http/1.1", "1.1"), ("HTTP/1.0", "1.0"), ("h2", "2"), ("h3", "3"), ("spdy/3.1", nil), (nil, nil),
        ] as [(String?, String?)])
    func httpVersion(name: String?, version: String?) {
        #expect(TransferTimings.httpVersion(fromProtocolName: name) == version)
    }
}
