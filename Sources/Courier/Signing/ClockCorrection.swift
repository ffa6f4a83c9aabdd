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
/// be read, that is more than a year from the device's, or that does not differ from the time
/// the request was signed with, is not used: the refusal is returned as it is. A request is
/// signed again at most once.
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

    /// The offset from the device clock (`local`) to the server's time in `response`, when it
    /// can be read, is within ``ClockOffset/limit`` and differs from `used` by 2 s or more.
    func offset(in response: HTTPResponse, local: Date, used: TimeInterval) -> TimeInterval? {
        guard let server = serverDate(in: response) else { return nil }
        let offset = server.timeIntervalSince(local)
        guard offset.isFinite, abs(offset) <= ClockOffset.limit, abs(offset - used) >= 2 else { return nil }
        return offset
    }

    /// The server's time in `response`, or `nil` when it has none that can be read.
    func serverDate(in response: HTTPResponse) -> Date? {
        switch serverTime {
        case .dateHeader:
            return response.headers["Date"].flatMap(HTTPDate.parse)
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

/// The HTTP date format of RFC 9110 (IMF-fixdate), parsed by hand: no formatter, no locale.
/// The obsolete forms (RFC 850, asctime) are not read: a server that sends one gets no
/// correction.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, or `nil` for anything else (a day the month does not
    /// have included).
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = number(parts[1], digits: 2), let month = months.firstIndex(of: String(parts[2])),
            let year = number(parts[3], digits: 4), year >= 1970,
            (1...length(ofMonth: month + 1, in: year)).contains(day)
        else { return nil }
        let time = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, let hour = number(time[0], digits: 2), let minute = number(time[1], digits: 2),
            let second = number(time[2], digits: 2), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    /// The value of exactly `digits` ASCII digits.
    private static func number(_ text: Substring, digits: Int) -> Int? {
        guard text.utf8.count == digits, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func length(ofMonth month: Int, in year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
