import Foundation

/// Splits JSON Lines (NDJSON) and JSON text sequences (RFC 7464) into records, from pieces of
/// bytes cut anywhere.
///
/// A record ends at `LF` or at the record separator `RS` (0x1E) that starts the next one; a
/// `CR` before the `LF` and blank lines are dropped. At the end, a last record without its
/// `LF` counts. A record longer than `maximumLineLength` bytes throws
/// ``NetworkError/Code/responseTooLarge``.
package struct JSONLinesParser {
    let maximumLineLength: Int
    private var line: [UInt8] = []

    package init(maximumLineLength: Int = 1 << 20) {
        self.maximumLineLength = maximumLineLength
    }

    /// Reads a piece of the stream.
    /// - Returns: The records it completed, in order, without blank ones.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` for a line past the bound (the records
    ///   before it are lost: ``parse(_:into:)`` keeps them).
    package mutating func parse(_ piece: Data) throws(NetworkError) -> [Data] {
        var records: [Data] = []
        try parse(piece, into: &records)
        return records
    }

    /// Reads a piece of the stream, adding the records it completes to `records`.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` for a line past the bound, after the
    ///   records before it were added.
    package mutating func parse(_ piece: Data, into records: inout [Data]) throws(NetworkError) {
        var failure: NetworkError?
        piece.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var index = 0
            while index < bytes.count {
                var end = index
                while end < bytes.count, bytes[end] != 0x0A, bytes[end] != 0x1E { end += 1 }
                guard line.count + (end - index) <= maximumLineLength else {
                    failure = NetworkError(
                        .responseTooLarge, "A line of the stream is longer than \(maximumLineLength) bytes.")
                    return
                }
                line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                guard end < bytes.count else { break }
                if let record = take() { records.append(record) }
                index = end + 1
            }
        }
        if let failure { throw failure }
    }

    /// The last record, when the stream ended without an `LF` after it.
    package mutating func finish() -> Data? { take() }

    /// The line gathered so far as a record, or `nil` when it is blank; empties it.
    private mutating func take() -> Data? {
        defer { line.removeAll(keepingCapacity: true) }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = line.firstIndex(where: { !isSpace($0) }), let last = line.lastIndex(where: { !isSpace($0) })
        else { return nil }
        return Data(line[first...last])
    }
}
