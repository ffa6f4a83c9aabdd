import Foundation

/// HTTP dates (RFC 9110 §5.6.7), as `Date`, `Expires` and `Last-Modified` carry them, read and
/// written by hand: no formatter, no locale, cheap and safe from any thread. The three forms a
/// recipient must read, each exactly as written (one space apart, English names, `GMT`):
///
/// - `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate, what servers send today, and what is written),
/// - `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850; a two-digit year more than 50 years ahead of now
///   is read in the century before),
/// - `Sun Nov  6 08:49:37 1994` (C's `asctime`, the day padded with a space).
///
/// Anything else is `nil`: a day the month does not have, a time out of range, a year before
/// 1970 or after 9999. The weekday is not checked against the date. The arithmetic is in 64
/// bits, so a date after 2038 is no overflow where `Int` has 32.
package enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let secondsPerDay: Int64 = 86_400

    /// The date `text` names, or `nil`.
    /// - Parameters:
    ///   - text: A field value.
    ///   - now: The time a two-digit year is read against.
    /// - Returns: The date.
    package static func parse(_ text: String, now: Date = Date()) -> Date? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        switch parts.count {
        case 6 where parts[0].hasSuffix(","):
            // Sun, 06 Nov 1994 08:49:37 GMT
            guard days.contains(String(parts[0].dropLast())), parts[5] == "GMT",
                let day = number(parts[1], digits: 2), let year = number(parts[3], digits: 4)
            else { return nil }
            return date(year: year, month: parts[2], day: day, time: parts[4])
        case 4:
            // Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts[0].hasSuffix(","), longDays.contains(String(parts[0].dropLast())), parts[3] == "GMT",
                date.count == 3, let day = number(date[0], digits: 2), let shortYear = number(date[2], digits: 2)
            else { return nil }
            let thisYear = civil(fromDays: Int64((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
            var year = thisYear - thisYear % 100 + shortYear
            if year > thisYear + 50 { year -= 100 }
            return self.date(year: year, month: date[1], day: day, time: parts[2])
        case 5, 6:
            // Sun Nov  6 08:49:37 1994, or Sun Nov 16 08:49:37 1994
            let padded = parts.count == 6
            guard days.contains(String(parts[0])), !padded || parts[2].isEmpty,
                let day = number(parts[padded ? 3 : 2], digits: padded ? 1 : 2),
                let year = number(parts[padded ? 5 : 4], digits: 4)
            else { return nil }
            return date(year: year, month: parts[1], day: day, time: parts[padded ? 4 : 3])
        default:
            return nil
        }
    }

    /// `date` in the preferred form, `Sun, 06 Nov 1994 08:49:37 GMT`, whole seconds; `nil` for
    /// one before 1970 or after 9999.
    /// - Parameter date: The date.
    /// - Returns: The text.
    package static func format(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 0, seconds < 253_402_300_800 else { return nil }
        let whole = Int64(seconds)
        let (year, month, day) = civil(fromDays: whole / secondsPerDay)
        let time = whole % secondsPerDay
        // 1970-01-01 was a Thursday, the fourth day of a week that starts on Monday.
        let weekday = days[Int((whole / secondsPerDay + 3) % 7)]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year4 = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(Int64(day))) \(months[month - 1]) \(year4) "
            + "\(two(time / 3_600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// The date of the parts, each checked: a month's English abbreviation, a day it has,
    /// `HH:MM:SS` with hours 0–23, minutes 0–59 and seconds 0–60 (a leap second counts as the
    /// next second).
    private static func date(year: Int, month name: Substring, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (1970...9999).contains(year), let month = months.firstIndex(of: String(name)),
            (1...length(ofMonth: month + 1, in: year)).contains(day), clock.count == 3,
            let hour = number(clock[0], digits: 2), let minute = number(clock[1], digits: 2),
            let second = number(clock[2], digits: 2), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month + 1, day: day)
        let seconds = days * secondsPerDay + Int64(hour * 3_600 + minute * 60 + second)
        // A leap second at the very end of 9999 would be a year that cannot be written.
        guard seconds < 253_402_300_800 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
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

    /// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar, counted in
    /// eras of 400 years from a year that starts in March, so the leap day falls last.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = Int64((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day counted from 1970-01-01 (not before it): the inverse of
    /// ``daysSinceEpoch(year:month:day:)``.
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = max(days, 0) + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
