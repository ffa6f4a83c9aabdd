/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Setting a field replaces every field of the same name; ``append(name:value:)`` keeps
/// earlier ones (for headers that may repeat).
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers["phone_type"] = "app_iOS"
/// let accept = headers["accept"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name as given (lookups ignore case).
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a field.
        /// - Parameters:
        ///   - name: The field name.
        ///   - value: The field value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates an empty list of fields.
    public init() { fields = [] }

    /// Creates a list from fields, kept in the order given.
    /// - Parameter fields: The fields.
    public init(_ fields: [Field]) { self.fields = fields }

    /// Creates a list from a literal, kept in the order written.
    /// - Parameter elements: Name and value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The value of the first field with this name (ignoring case), or `nil`. Setting a value
    /// replaces all fields of that name; setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            let matches = fields.indices.filter { fields[$0].name.caseInsensitiveEquals(name) }
            guard let newValue else {
                for index in matches.reversed() { fields.remove(at: index) }
                return
            }
            guard let first = matches.first else {
                fields.append(Field(name: name, value: newValue))
                return
            }
            fields[first].value = newValue
            for index in matches.dropFirst().reversed() { fields.remove(at: index) }
        }
    }

    /// Appends a field, keeping any earlier field of the same name.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Sets every field of `other` here, replacing fields of the same names.
    /// - Parameter other: The fields that win.
    public mutating func merge(_ other: HTTPHeaders) {
        for field in other.fields { self[field.name] = field.value }
    }

    /// Whether there is no field.
    public var isEmpty: Bool { fields.isEmpty }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

extension HTTPHeaders {
    /// Whether a field can go on the wire as it is: its name is an RFC 9110 token, and its
    /// value holds no control character but horizontal tab (so no CR, LF or NUL that would end
    /// the field early and start another).
    /// - Parameter field: The field.
    /// - Returns: `true` when it is safe to send.
    public static func isValid(_ field: Field) -> Bool {
        HTTPMethod.isToken(field.name)
            && field.value.utf8.allSatisfy { byte in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
    }

    /// The fields a request may not set, lower-case: they frame the message or manage the
    /// connection, which is the transport's work. A `Content-Length` shorter than the body,
    /// say, would make the server read the rest of the body as a request of its own.
    public static let transportOwnedNames: Set<String> = [
        "content-length", "transfer-encoding", "te", "trailer", "connection", "upgrade", "keep-alive",
        "proxy-connection",
    ]
}

extension HTTPHeaders {
    /// The parts of a field value between each `separator` (`,` for a list, `;` for
    /// parameters), with a separator inside a quoted value (`a="x, y"`, `a="x\"; y"`) kept in
    /// its part. A quote opens a quoted value only after a part's `=`; should one never close,
    /// the value is split at every separator, so a `no-store` after it is still seen. Parts are
    /// not trimmed; empty ones are kept.
    static func parts(of value: String, separatedBy separator: Character) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var inValue = false
        var quoted = false
        var escaped = false
        for index in value.indices {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false }
            } else if character == "\"", inValue {
                quoted = true
            } else if character == "=" {
                inValue = true
            } else if character == separator {
                parts.append(value[start..<index])
                start = value.index(after: index)
                inValue = false
            }
        }
        guard !quoted else { return value.split(separator: separator, omittingEmptySubsequences: false) }
        parts.append(value[start...])
        return parts
    }

    /// A `name=value` part of a field value: its name trimmed and lower-cased, and its value
    /// trimmed and, when it is one whole quoted string, without the quotes and backslashes;
    /// `nil` without `=`. A value with anything after its closing quote stays as it was, so it
    /// reads as malformed rather than as its quoted start.
    static func parameter(_ part: Substring) -> (name: String, value: String?) {
        guard let equals = part.firstIndex(of: "=") else {
            return (part.trimmingCharacters(in: .whitespaces).lowercased(), nil)
        }
        let name = part[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        let raw = part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard raw.hasPrefix("\"") else { return (name, raw) }
        var unquoted = ""
        var escaped = false
        for (offset, character) in raw.dropFirst().enumerated() {
            if escaped {
                unquoted.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                // The closing quote: the value, if nothing follows it.
                return (name, offset == raw.count - 2 ? unquoted : raw)
            } else {
                unquoted.append(character)
            }
        }
        return (name, raw)
    }
}

extension String {
    /// ASCII case-insensitive comparison, enough for header names and media types.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }
}
