import Foundation

/// How long the phases of one exchange took, each measured from its start: libcurl's timings
/// with `CurlTransport`, the task's transaction metrics with `URLSessionTransport` on Apple
/// platforms.
public struct TransferTimings: Sendable, Hashable {
    /// Until the host name was resolved.
    public var nameLookup: Duration
    /// Until the TCP connection was made (zero for a reused connection).
    public var connect: Duration
    /// Until the TLS handshake was done (zero without TLS).
    public var tlsHandshake: Duration
    /// Until the first byte of the answer arrived.
    public var firstByte: Duration
    /// Until the answer was complete.
    public var total: Duration

    /// Creates timings.
    /// - Parameters:
    ///   - nameLookup: Until the name was resolved.
    ///   - connect: Until connected.
    ///   - tlsHandshake: Until the TLS handshake was done.
    ///   - firstByte: Until the first byte arrived.
    ///   - total: Until the answer was complete.
    public init(nameLookup: Duration, connect: Duration, tlsHandshake: Duration, firstByte: Duration, total: Duration) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
    }
}

extension TransferTimings {
    /// Timings from the moments an exchange reached each phase, as `URLSessionTaskMetrics`
    /// reports them: a phase that did not happen (no name lookup, a reused connection, no TLS)
    /// counts as zero. `nil` without a start and an end. `connectEnd` is when TCP was
    /// connected: for TLS, when the handshake began (the metrics' connect phase includes it).
    init?(start: Date?, nameLookupEnd: Date?, connectEnd: Date?, tlsEnd: Date?, firstByte: Date?, end: Date?) {
        guard let start, let end, start.timeIntervalSinceReferenceDate.isFinite,
            end.timeIntervalSinceReferenceDate.isFinite,
            end >= start
        else { return nil }
        func since(_ moment: Date?) -> Duration {
            guard let moment, moment.timeIntervalSinceReferenceDate.isFinite, moment >= start else { return .zero }
            // In microseconds, as the metrics' dates resolve them; a year at most, so a wild
            // clock cannot overflow the count.
            return .microseconds(Int64((min(moment.timeIntervalSince(start), 3.2e7) * 1e6).rounded()))
        }
        self.init(
            nameLookup: since(nameLookupEnd), connect: since(connectEnd), tlsHandshake: since(tlsEnd),
            firstByte: since(firstByte), total: since(end))
    }

    /// ``HTTPResponse/httpVersion`` from an ALPN protocol name (`http/1.1`, `h2`, `h3`), as
    /// `URLSessionTaskTransactionMetrics.networkProtocolName` gives it.
    static func httpVersion(fromProtocolName name: String?) -> String? {
        switch name?.lowercased() {
        case "http/1.0": "1.0"
        case "http/1.1": "1.1"
        case "h2", "h2c": "2"
        case "h3": "3"
        default: nil
        }
    }
}
