import Foundation

/// How the signing layer copes with a device clock that is wrong: when the backend refuses a
/// request's timestamp (with one of ``codes``), the layer reads the server's time from the answer
/// and, when the device clock is off from it by 2 seconds or more, signs the request again with
/// the server's time and sends it once more. When the server takes it (a 2xx answer without a
/// refusal code), later requests to that server (its origin: scheme, host and port) are signed
/// with the corrected time from the start; requests to other servers keep their own. A
/// correction is adopted only within the session it was made in (see ``Session``), and never one
/// that moves the clock further than ``maximumCorrection``, so no answer can move the signing
/// clock by days.
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
/// be read, that is further than ``maximumCorrection`` from the time the request was signed with
/// or more than a year from the device's, or that falls between the moment the request was
/// signed and the moment its answer arrived (give or take 2 seconds, as `Date` counts whole
/// seconds), is not used: the refusal is returned as it is, however slow the answer was. A
/// request is signed again at most once. So a clock off by less than a request's round trip is
/// not corrected by that request, and a correction can fall short of the true offset by up to
/// the round trip: the server's tolerance should be wider than a round trip.
public struct ClockCorrection: Sendable, Hashable {
    /// Where the answer says what time it is on the server.
    public enum ServerTime: Sendable, Hashable {
        /// The `Date` header (`Sun, 06 Nov 1994 08:49:37 GMT`).
        case dateHeader
        /// A number in the JSON body at this key or dotted path: Unix time in seconds, or in
        /// milliseconds when it is above 100,000,000,000. The key is matched as the client's
        /// decoder matches keys, as the envelope's are: with `.convertFromSnakeCase`, write
        /// `serverTime` for a body's `server_time`.
        case field(String)
    }

    /// The business codes with which the backend refuses a timestamp as too old or too new.
    public var codes: Set<BusinessCode>
    /// Where the server's time is read from.
    public var serverTime: ServerTime
    /// The furthest one correction may move the signing clock of a server; a server's time
    /// further off is not believed, and the refusal is returned as it is. Default one day.
    public var maximumCorrection: Duration

    /// Creates the correction.
    /// - Parameters:
    ///   - codes: The business codes that mean "timestamp expired".
    ///   - serverTime: Where the answer carries the server's time; its `Date` header by default.
    ///   - maximumCorrection: The furthest one correction may move the clock; one day by default.
    public init(
        codes: Set<BusinessCode>, serverTime: ServerTime = .dateHeader, maximumCorrection: Duration = .seconds(86_400)
    ) {
        self.codes = codes
        self.serverTime = serverTime
        self.maximumCorrection = maximumCorrection
    }

    /// The largest offset believed, however many corrections led to it: a clock more than a year
    /// off is a broken answer, not a clock.
    static let farthest: TimeInterval = 366 * 24 * 3600

    /// The key of the JSON field the server's time is read from, if it is one.
    var serverTimeField: String? {
        if case .field(let key) = serverTime { return key }
        return nil
    }

    /// Whether `response` refuses a request's timestamp.
    func refuses(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        guard let code = context.businessCode(in: response) else { return false }
        return codes.contains(code)
    }

    /// Whether `response` takes a request signed with a corrected time: a success status, and
    /// no refusal.
    func accepts(_ response: HTTPResponse, _ context: InterceptorContext) -> Bool {
        (200..<300).contains(response.status) && !refuses(response, context)
    }

    /// The offset from the device clock to the server's time in `response`, when that time can
    /// be read, lies 2 s or more outside the span from `sent` to `arrived` (device times, shifted
    /// by the offset `used` to sign), and is within ``maximumCorrection`` of `used`: the server
    /// read its clock somewhere in that span, so a time inside it agrees however slow the answer
    /// was. The offset is measured to the nearer end of the span.
    func offset(
        in response: HTTPResponse, _ context: InterceptorContext, sent: Date, arrived: Date, used: TimeInterval
    ) -> TimeInterval? {
        guard let server = serverDate(in: response, context.decoder) else { return nil }
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
        guard offset.isFinite, abs(offset - used) <= maximumCorrection.seconds, abs(offset) <= Self.farthest
        else { return nil }
        return offset
    }

    /// The server's time in `response`, its body read by `decoder` (as the client reads the
    /// envelope), or `nil` when it has none that can be read.
    func serverDate(in response: HTTPResponse, _ decoder: JSONDecoder) -> Date? {
        switch serverTime {
        case .dateHeader:
            return response.headers["Date"].flatMap { HTTPDate.parse($0) }
        case .field(let key):
            // The client's view looks for the key already; a layer outside a client reads it now.
            var view = response.envelope(decoder)
            if !view.numberKeys.contains(key) {
                view = EnvelopeView.read(
                    response.body, with: decoder.copy(addingUserInfo: [.envelopeNumberKeys: Set([key])]))
            }
            guard let value = view.number(at: key), value.isFinite, value > 0 else { return nil }
            return Date(timeIntervalSince1970: value > 100_000_000_000 ? value / 1000 : value)
        }
    }
}

/// How far each server's clock is ahead of the device's, once a request signed with it was
/// taken, by origin. At most ``limit`` servers are remembered; past it the oldest is forgotten
/// (its requests are signed with the device clock again, and corrected again if refused).
///
/// `@unchecked Sendable`: `offsets` and `order` are guarded by `lock`.
final class ClockOffsets: @unchecked Sendable {
    static let limit = 64

    private let lock = NSLock()
    private var offsets: [String: TimeInterval] = [:]
    /// The origins, oldest correction first.
    private var order: [String] = []

    /// The offset for `origin`'s server; 0 when none was taken.
    func current(for origin: String) -> TimeInterval {
        lock.withLock { offsets[origin] ?? 0 }
    }

    func set(_ offset: TimeInterval, for origin: String) {
        lock.withLock {
            if offsets.updateValue(offset, forKey: origin) != nil { order.removeAll { $0 == origin } }
            order.append(origin)
            if order.count > Self.limit { offsets[order.removeFirst()] = nil }
        }
    }
}
