import Foundation

/// How the signing layer copes with a device clock that is wrong: when the backend refuses a
/// request's timestamp (with one of ``codes``), the layer reads the server's time from the answer
/// and, when the device clock is off from it by 2 seconds or more, signs the request again with
/// the server's time and sends it once more. When the server takes it, later requests are signed
/// with the corrected time from the start.
///
/// The request goes out a second time whatever its method, as a token refresh replays one: name
/// only codes with which the backend refuses a request *before* acting on it.
///
/// ```swift
/// .signing(.hmacSHA256(secret: Data(key.utf8)), clockCorrection: ClockCorrection(codes: [1001]))
/// ```
///
/// The server's time comes from the answer's `Date` header, or from a field of its JSON body
/// (Unix time in seconds or milliseconds, such as `serverTime` or `data.now`). A time that cannot
/// be read, that is more than a year from the device's, or that falls between the moment the
/// request was signed and the moment its answer arrived (give or take 2 seconds, as `Date` counts
/// whole seconds), is not used: the refusal is returned as it is, however slow the answer was. A
/// request is signed again at most once. So a clock off by less than a request's round trip is
/// not corrected by that request, and a correction can fall short of the true offset by up to
/// the round trip: the server's tolerance should be wider than a round trip.
public struct ClockCorrection: Sendable, Hashable {
    /// Where the answer says what time it is on the server.
    public enum ServerTime: Sendable, Hashable {
        /// The `Date` header (`Sun, 06 Nov 1994 08:49:37 GMT`).
        case dateHeader
        /// A number in the JSON body at this key or dotted path: Unix time in seconds, or in
        /// milliseconds when it is above 100,000,000,000.
        case field(String)
    }

    /// The business codes with which the backend refuses a timestamp as too old or too new.
    public var codes: Set<BusinessCode>
    /// Where the server's time is read from.
    public var serverTime: ServerTime

    /// Creates the correction.
    /// - Parameters:
    ///   - codes: The business codes that mean "timestamp expired".
    ///   - serverTime: Where the answer carries the server's time; its `Date` header by default.
    public init(codes: Set<BusinessCode>, serverTime: ServerTime = .dateHeader) {
        self.codes = codes
        self.serverTime = serverTime
    }

    /// Whether `response` refuses a request's timestamp.
    func refuses(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        guard let code = context.businessCode(in: response) else { return false }
        return codes.contains(code)
    }

    /// The offset from the device clock to the server's time in `response`, when that time can
    /// be read, is within ``ClockOffset/limit``, and lies 2 s or more outside the span from
    /// `sent` to `arrived` (device times, shifted by the offset `used` to sign): the server read
    /// its clock somewhere in that span, so a time inside it agrees however slow the answer was.
    /// The offset is measured to the nearer end of the span.
    func offset(in response: HTTPResponse, sent: Date, arrived: Date, used: TimeInterval) -> TimeInterval? {
        guard let server = serverDate(in: response) else { return nil }
        let fromSending = server.timeIntervalSince(sent)
        let fromArrival = server.timeIntervalSince(arrived)
        let offset: TimeInterval
        if fromArrival - used >= 2 {
            offset = fromArrival
        } else if fromSending - used <= -2 {
            offset = fromSending
        } else {
            return nil
        }
        guard offset.isFinite, abs(offset) <= ClockOffset.limit else { return nil }
        return offset
    }

    /// The server's time in `response`, or `nil` when it has none that can be read.
    func serverDate(in response: HTTPResponse) -> Date? {
        switch serverTime {
        case .dateHeader:
            return response.headers["Date"].flatMap { HTTPDate.parse($0) }
        case .field(let key):
            guard let object = EnvelopeProbe.object(in: response.body),
                let number = EnvelopeProbe.value(at: key, in: object) as? NSNumber,
                String(cString: number.objCType) != "c"
            else { return nil }
            let value = number.doubleValue
            guard value.isFinite, value > 0 else { return nil }
            return Date(timeIntervalSince1970: value > 100_000_000_000 ? value / 1000 : value)
        }
    }
}

/// How far the server's clock is ahead of the device's, once a request signed with it was taken.
/// `@unchecked Sendable`: `offset` is guarded by `lock`.
final class ClockOffset: @unchecked Sendable {
    /// The largest offset believed: a clock more than a year off is a broken answer, not a clock.
    static let limit: TimeInterval = 366 * 24 * 3600

    private let lock = NSLock()
    private var offset: TimeInterval = 0

    var current: TimeInterval { lock.withLock { offset } }

    func set(_ offset: TimeInterval) { lock.withLock { self.offset = offset } }
}
