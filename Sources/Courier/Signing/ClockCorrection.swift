import Foundation

/// How the signing layer copes with a device clock that is wrong: when the backend refuses a
/// request's timestamp (with one of ``codes``), the layer reads the server's time from the answer,
/// remembers how far the device clock is off, signs the request again with the server's time and
/// sends it once more. Later requests are signed with the corrected time from the start.
///
/// ```swift
/// .signing(.hmacSHA256(secret: Data(key.utf8)), clockCorrection: ClockCorrection(codes: [1001]))
/// ```
///
/// The server's time comes from the answer's `Date` header, or from a field of its JSON body
/// (Unix time in seconds or milliseconds, such as `serverTime` or `data.now`). A time that cannot
/// be read, or that is more than a year from the device's, is not used: the refusal is returned
/// as it is. A request is signed again at most once.
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

/// How far the device clock is behind the server's, learnt from a refused timestamp.
/// `@unchecked Sendable`: `offset` is guarded by `lock`.
final class ClockOffset: @unchecked Sendable {
    /// The largest offset believed: a clock more than a year off is a broken answer, not a clock.
    static let limit: TimeInterval = 366 * 24 * 3600

    private let lock = NSLock()
    private var offset: TimeInterval = 0

    var current: TimeInterval { lock.withLock { offset } }

    /// Remembers the offset between `server` and `local`; `false` when it is beyond ``limit``.
    func learn(server: Date, local: Date) -> Bool {
        let learnt = server.timeIntervalSince(local)
        guard learnt.isFinite, abs(learnt) <= Self.limit else { return false }
        lock.withLock { offset = learnt }
        return true
    }
}

/// The HTTP date format of RFC 9110 (IMF-fixdate), parsed by hand: no formatter, no locale.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`, or `nil` for anything else.
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), (1...31).contains(day),
            let month = months.firstIndex(of: String(parts[2])),
            parts[3].count == 4, let year = Int(parts[3]), (1970...9999).contains(year)
        else { return nil }
        let time = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, time.allSatisfy({ $0.count == 2 }),
            let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
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
