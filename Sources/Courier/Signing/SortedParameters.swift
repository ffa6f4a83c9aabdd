import Foundation

/// The query and form parameters of a request as the sorted lists a ``CanonicalRequest`` signs.
enum SortedParameters {
    /// The `name=value` pairs of `query` and `form`, but those named `excluding`, each
    /// percent-encoded as on the wire, sorted by their bytes and joined with `&`: the query's
    /// pairs, the form's, and both together.
    static func lists(query: [Parameters.Item], form: [Parameters.Item], excluding: String?)
        -> (query: String, form: String, both: String)
    {
        let capacity = query.reduce(0) { $0 + $1.maximumEncodedCount } + form.reduce(0) { $0 + $1.maximumEncodedCount }
        // Every pair is encoded once into one buffer, and the lot sorted once as ranges of it;
        // each list copies its pairs from there. Both buffers last only for the call.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { bytes in
            withUnsafeTemporaryAllocation(of: Pair.self, capacity: query.count + form.count) { pairs in
                var count = 0
                var pairCount = 0
                // Items are read in place: one copied out would cost three reference counts and back.
                func write(_ items: [Parameters.Item], inQuery: Bool) {
                    items.withUnsafeBufferPointer { items in
                        for index in items.indices where items[index].name != excluding {
                            let start = count
                            count = items[index].writeEncoded(to: bytes, at: count)
                            pairs.initializeElement(at: pairCount, to: Pair(range: start..<count, inQuery: inQuery))
                            pairCount += 1
                        }
                    }
                }
                write(query, inQuery: true)
                write(form, inQuery: false)
                let encoded = UnsafeBufferPointer(bytes)
                var sorted = UnsafeMutableBufferPointer(rebasing: pairs[..<pairCount])
                sorted.sort { precedes(encoded, $0.range, $1.range) }
                let inQuery = joined(sorted, of: encoded) { $0 }
                let inForm = joined(sorted, of: encoded) { !$0 }
                let both =
                    inForm.isEmpty ? inQuery : inQuery.isEmpty ? inForm : joined(sorted, of: encoded) { _ in true }
                return (inQuery, inForm, both)
            }
        }
    }

    /// One encoded pair: where it is in the buffer, and whether it came from the query.
    private struct Pair {
        let range: Range<Int>
        let inQuery: Bool
    }

    /// The pairs for which `chosen` (given whether a pair is in the query) is true, joined with `&`.
    private static func joined(
        _ pairs: UnsafeMutableBufferPointer<Pair>, of bytes: UnsafeBufferPointer<UInt8>, where chosen: (Bool) -> Bool
    ) -> String {
        var length = -1
        for pair in pairs where chosen(pair.inQuery) { length += 1 + pair.range.count }
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { text in
            var count = 0
            for pair in pairs where chosen(pair.inQuery) {
                if count > 0 {
                    text[count] = UInt8(ascii: "&")
                    count += 1
                }
                count += UnsafeMutableBufferPointer(rebasing: text[count...])
                    .initialize(fromContentsOf: UnsafeBufferPointer(rebasing: bytes[pair.range]))
            }
            return count
        }
    }

    /// Whether the bytes in `lhs` sort before those in `rhs`.
    private static func precedes(_ buffer: UnsafeBufferPointer<UInt8>, _ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        let common = min(lhs.count, rhs.count)
        if common > 0, let base = buffer.baseAddress {
            let order = memcmp(base + lhs.lowerBound, base + rhs.lowerBound, common)
            if order != 0 { return order < 0 }
        }
        return lhs.count < rhs.count
    }
}
