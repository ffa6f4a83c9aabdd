/// An HTTP request method.
///
/// An open set: the common methods are static constants, and any other token
/// (for example a WebDAV method) is created from its name.
///
/// ```swift
/// let get: HTTPMethod = .get
/// let custom = HTTPMethod("PROPFIND")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The method token as it is sent on the wire, for example `GET`.
    public let rawValue: String

    /// Creates a method from its token. The token is used exactly as given.
    /// - Parameter rawValue: The method token, for example `"PROPFIND"`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from its token. The token is used exactly as given.
    /// - Parameter name: The method token, for example `"PROPFIND"`.
    public init(_ name: String) { self.rawValue = name }

    /// Creates a method from a string literal, for example `"PROPFIND"`.
    /// - Parameter value: The method token.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The method token.
    public var description: String { rawValue }

    /// `GET`: read a resource.
    public static let get = HTTPMethod("GET")
    /// `POST`: create a resource or submit data.
    public static let post = HTTPMethod("POST")
    /// `PUT`: replace a resource.
    public static let put = HTTPMethod("PUT")
    /// `PATCH`: change part of a resource.
    public static let patch = HTTPMethod("PATCH")
    /// `DELETE`: remove a resource.
    public static let delete = HTTPMethod("DELETE")
    /// `HEAD`: like `GET` but the answer carries no body.
    public static let head = HTTPMethod("HEAD")
    /// `OPTIONS`: ask which methods a resource supports.
    public static let options = HTTPMethod("OPTIONS")

    /// Whether the method is idempotent by definition (RFC 9110 §9.2.2): sending it twice has the
    /// same effect as sending it once. Only these are retried automatically.
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Whether parameters that interceptors add go in the query (`GET`, `HEAD`, `DELETE`) rather
    /// than in a body.
    var carriesParametersInQuery: Bool {
        self == .get || self == .head || self == .delete
    }

    /// Whether the method is a valid RFC 9110 token, so it can go on the wire.
    var isValidToken: Bool { Self.isToken(rawValue) }

    /// Whether text is an RFC 9110 token (visible ASCII letters, digits and
    /// `!#$%&'*+-.^_`|~`): what method names and header field names must be.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
