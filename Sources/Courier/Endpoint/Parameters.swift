/// An ordered list of name/value parameters, for a URL query or a form body.
///
/// Order is kept and names may repeat (`tag=a&tag=b`). A literal reads like a dictionary but
/// keeps what you wrote, in the order you wrote it:
///
/// ```swift
/// let query: Parameters = ["page": "1", "tag": "new", "tag": "sale"]
/// ```
///
/// Values stay structured until the request goes on the wire, so interceptors (common
/// parameters, signing) see and sign exactly what is sent. Encoding uses one RFC 3986
/// encoder for query and form alike (see ``PercentEncoding``).
public struct Parameters: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// One parameter.
    public struct Item: Sendable, Hashable {
        /// The parameter name, unencoded.
        public var name: String { didSet { written = nil } }
        /// The parameter value, unencoded.
        public var value: String { didSet { written = nil } }
        /// The pair as it was written in a URL, when it goes on the wire as written (see
        /// ``Parameters/decoding(_:)``).
        var written: String?

        /// Creates a parameter.
        /// - Parameters:
        ///   - name: The unencoded name.
        ///   - value: The unencoded value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// The pair as it goes on the wire.
        var encoded: String {
            written ?? String(unsafeUninitializedCapacity: maximumEncodedCount) { writeEncoded(to: $0, at: 0) }
        }

        /// The most bytes ``encoded`` can take.
        var maximumEncodedCount: Int {
            written?.utf8.count
                ?? PercentEncoding.maximumEncodedCount(name) + 1 + PercentEncoding.maximumEncodedCount(value)
        }

        /// Writes the pair as it goes on the wire into `output` from `offset`, which has room for
        /// ``maximumEncodedCount`` bytes there, and returns the offset after it.
        func writeEncoded(to output: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
            guard let written else {
                let equals = PercentEncoding.write(name, to: output, at: offset)
                precondition(equals < output.count, "no room to write the pair")
                output[equals] = UInt8(ascii: "=")
                return PercentEncoding.write(value, to: output, at: equals + 1)
            }
            precondition(offset >= 0 && written.utf8.count <= output.count - offset, "no room to write the pair")
            var count = offset
            for byte in written.utf8 {
                output[count] = byte
                count += 1
            }
            return count
        }

        /// Whether both have the same name and value (however each was written).
        public static func == (lhs: Item, rhs: Item) -> Bool { lhs.name == rhs.name && lhs.value == rhs.value }

        /// Hashes the name and value.
        /// - Parameter hasher: The hasher.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(value)
        }
    }

    /// The parameters in order.
    public var items: [Item]

    /// Creates a list from items, kept in the order given.
    /// - Parameter items: The parameters.
    public init(_ items: [Item] = []) { self.items = items }

    /// Creates a list from a literal, kept in the order written, repeated names included.
    /// - Parameter elements: Name and value pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        items = elements.map { Item(name: $0.0, value: $0.1) }
    }

    /// The value of the first parameter with this name, or `nil`. Setting a value replaces the
    /// first parameter of that name and removes the others (or appends one when there is
    /// none); setting `nil` removes them all.
    public subscript(name: String) -> String? {
        get { items.first { $0.name == name }?.value }
        set {
            guard let newValue else {
                items.removeAll { $0.name == name }
                return
            }
            guard let first = items.firstIndex(where: { $0.name == name }) else {
                items.append(Item(name: name, value: newValue))
                return
            }
            items[first] = Item(name: name, value: newValue)
            let later = items[(first + 1)...].filter { $0.name != name }
            items.replaceSubrange((first + 1)..., with: later)
        }
    }

    /// Appends a parameter, keeping earlier ones of the same name.
    /// - Parameters:
    ///   - name: The unencoded name.
    ///   - value: The unencoded value.
    public mutating func append(name: String, value: String) {
        items.append(Item(name: name, value: value))
    }

    /// Appends every parameter of `other`, in order.
    /// - Parameter other: The parameters to add.
    public mutating func append(contentsOf other: Parameters) {
        items.append(contentsOf: other.items)
    }

    /// Whether there is no parameter.
    public var isEmpty: Bool { items.isEmpty }

    /// The number of parameters.
    public var count: Int { items.count }

    /// Iterates over the parameters in order.
    public func makeIterator() -> IndexingIterator<[Item]> { items.makeIterator() }

    /// The parameters encoded as `name=value&name=value`, each name and value percent-encoded
    /// with ``PercentEncoding/encode(_:)``. This is the URL query and the form body. A pair
    /// ``decoding(_:)`` could not decode without loss keeps the text it was written with.
    public var encoded: String {
        let capacity = items.reduce(items.count) { $0 + $1.maximumEncodedCount }
        return String(unsafeUninitializedCapacity: capacity) { output in
            var count = 0
            for (index, item) in items.enumerated() {
                if index > 0 {
                    output[count] = UInt8(ascii: "&")
                    count += 1
                }
                count = item.writeEncoded(to: output, at: count)
            }
            return count
        }
    }

    /// Parses `a=1&b=2` (an encoded query or form body) into parameters, percent-decoding each
    /// name and value. `+` is kept as a literal plus (RFC 3986), not read as a space.
    /// A malformed escape (a lone `%`) is kept as written. A pair that decoding would change
    /// for good (an escape that is not UTF-8, like `sig=%FF`, or a bare `flag`) is sent as it
    /// was written.
    /// - Parameter encoded: The encoded text, without a leading `?`.
    /// - Returns: The parameters in order.
    public static func decoding(_ encoded: Substring) -> Parameters { decoding(encoded, keepsText: .whenLossy) }

    /// When a parsed pair goes on the wire as it was written.
    enum KeptText {
        /// When decoding loses something (an escape that is not UTF-8, a pair without `=`).
        case whenLossy
        /// Whenever encoding it again would change it: for URLs a server wrote (a redirect's
        /// `Location`), which go back byte for byte (`q=a+b` stays).
        case whenChanged
    }

    static func decoding(_ encoded: Substring, keepsText: KeptText) -> Parameters {
        var result = Parameters()
        for pair in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            var item = Item(
                name: PercentEncoding.decode(parts[0]), value: parts.count > 1 ? PercentEncoding.decode(parts[1]) : "")
            let lossy = parts.count == 1 || (item.name + item.value).contains("\u{FFFD}") && !pair.contains("\u{FFFD}")
            // Text kept is visible ASCII without `#`, with what a query may not hold as it stands
            // (a `|`, a lone `%`) escaped, as `URL(string:)` escapes it: every transport then
            // sends the same bytes.
            if keepsText == .whenChanged || lossy, pair.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x23 }) {
                let written = PercentEncoding.encodeQuery(pair)
                if item.encoded != written { item.written = written }
            }
            result.items.append(item)
        }
        return result
    }
}
