import Foundation

/// The code an app backend puts in its envelope to say how a call went: a number (`0`, `99`)
/// or a string (`"A0001"`).
///
/// Write one as a literal of either kind: `successCodes: [0]`, `codes: [99, 500]`,
/// `successCodes: ["A0000"]`. A string of decimal digits, with an optional leading `-`, is the
/// same code as its number (`"0"` is `0`, `" 007"` is `7`), since backends send either for the
/// same code; any other string is a code of its own (`"+5"`, `"0x10"`, `"A0001"`). Spaces and
/// line breaks around a string are not part of it.
///
/// ```swift
/// switch error.businessCode {
/// case 99: showLogin()
/// case "A0230": showQuotaExceeded()
/// default: showMessage(error.message)
/// }
/// ```
public struct BusinessCode: Hashable, Sendable, Codable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    private enum Value: Hashable {
        case number(Int)
        case text(String)
    }

    private let value: Value

    /// A numeric code.
    /// - Parameter number: The number.
    public init(_ number: Int) { value = .number(number) }

    /// A code from its text, spaces and line breaks around it aside: the number it spells when
    /// it is decimal digits with an optional leading `-` (and fits an `Int`), otherwise the text.
    /// - Parameter text: The code's text.
    public init(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let digits = trimmed.utf8.first == UInt8(ascii: "-") ? trimmed.utf8.dropFirst() : trimmed.utf8[...]
        if !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let number = Int(trimmed)
        {
            value = .number(number)
        } else {
            value = .text(trimmed)
        }
    }

    /// A numeric code, from a literal.
    /// - Parameter value: The number.
    public init(integerLiteral value: Int) { self.init(value) }

    /// A code from a string literal (see ``init(_:)-(String)``).
    /// - Parameter value: The text.
    public init(stringLiteral value: String) { self.init(value) }

    /// Reads a JSON number that is an integer, or a JSON string.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for anything else (`true`, `1.5`, `null`, an object).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            self.init(number)
        } else if let text = try? container.decode(String.self) {
            self.init(text)
        } else {
            throw DecodingError.typeMismatch(
                BusinessCode.self,
                .init(codingPath: decoder.codingPath, debugDescription: "A business code is an integer or a string."))
        }
    }

    /// Writes the number, or the string.
    /// - Parameter encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .number(let number): try container.encode(number)
        case .text(let text): try container.encode(text)
        }
    }

    /// The code as a number, when it is one.
    public var number: Int? {
        if case .number(let number) = value { return number }
        return nil
    }

    /// The code as text: `99`, `A0001`.
    public var description: String {
        switch value {
        case .number(let number): String(number)
        case .text(let text): text
        }
    }
}
