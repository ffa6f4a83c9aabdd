import Foundation

/// Reads the `text/event-stream` format as the WHATWG HTML standard's "event stream
/// interpretation" says, from pieces of bytes cut anywhere (inside a line, a `CRLF` or a UTF-8
/// character).
///
/// - Lines end with `LF`, `CR` or `CRLF`; one byte order mark at the very start is skipped.
/// - A blank line dispatches the event: its data lines joined with `LF`, its type (`message`
///   when none), and the last event ID, which stays for later events until an `id` changes it.
///   An event without data is not dispatched.
/// - `:` starts a comment; a line without a colon is a field name with an empty value; one
///   space after the colon is dropped; unknown fields are ignored; an `id` with a NUL is
///   ignored; a `retry` that is not all ASCII digits is ignored.
/// - At the end, an event not ended by a blank line is discarded.
///
/// Lines longer than `maximumLineLength`, events with more data than `maximumEventSize`, field
/// names past ``maximumFieldNameLength`` and IDs past ``maximumIDLength`` bytes throw
/// ``NetworkError/Code/responseTooLarge``: memory stays bounded whatever the server sends.
package struct EventStreamParser {
    /// A dispatched event, before its data is decoded.
    package struct Event: Equatable {
        package var type: String
        package var data: String
        /// The last event ID when the event was dispatched.
        package var id: String
        /// Whether the event set the ID itself (rather than keeping an earlier event's).
        package var setsID = false
    }

    /// The longest field name read, in bytes.
    package static let maximumFieldNameLength = 128
    /// The longest event ID read, in bytes.
    package static let maximumIDLength = 1024

    let maximumLineLength: Int
    let maximumEventSize: Int
    /// The last event ID: sent as `Last-Event-ID` when the stream connects again.
    package private(set) var lastEventID = ""
    /// The reconnection time the server asked for with `retry`, in milliseconds.
    package var retry: Int?
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var type: [UInt8] = []
    private var idBuffer: [UInt8] = []
    private var setsID = false
    /// Whether the last byte seen was a `CR` (so an `LF` right after it ends nothing).
    private var afterCR = false
    /// Bytes of a possible byte order mark at the start, until it is known.
    private var start: [UInt8]? = []

    /// - Parameters:
    ///   - maximumLineLength: The longest line, in bytes.
    ///   - maximumEventSize: The most data bytes of one event.
    ///   - lastEventID: The last event ID of an earlier connection.
    package init(maximumLineLength: Int = 1 << 20, maximumEventSize: Int = 1 << 20, lastEventID: String = "") {
        self.maximumLineLength = maximumLineLength
        self.maximumEventSize = maximumEventSize
        self.lastEventID = lastEventID
        self.idBuffer = Array(lastEventID.utf8)
    }

    /// Reads a piece of the stream.
    /// - Returns: The events it completed, in order.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` past a bound (the events before it are
    ///   lost: ``parse(_:into:)`` keeps them).
    package mutating func parse(_ piece: Data) throws(NetworkError) -> [Event] {
        var events: [Event] = []
        try parse(piece, into: &events)
        return events
    }

    /// Reads a piece of the stream, adding the events it completes to `events` as they complete.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` past a bound, after the events before it
    ///   were added.
    package mutating func parse(_ piece: Data, into events: inout [Event]) throws(NetworkError) {
        var bytes = piece
        if let held = start {
            // At most two bytes wait here, and only until the first three are known.
            var joined = Data(held)
            joined.append(piece)
            let known = min(joined.count, 3)
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            guard Array(joined.prefix(known)) == Array(bom.prefix(known)) else {
                start = nil
                return try scan(joined, into: &events)
            }
            guard known == 3 else {
                start = Array(joined)
                return
            }
            start = nil
            bytes = joined.dropFirst(3)
        }
        try scan(bytes, into: &events)
    }

    private mutating func scan(_ piece: Data, into events: inout [Event]) throws(NetworkError) {
        // `withUnsafeBytes` throws untyped errors: the parser's own is carried out of it.
        var failure: NetworkError?
        piece.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            do throws(NetworkError) {
                try scan(buffer.bindMemory(to: UInt8.self), into: &events)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, into events: inout [Event]) throws(NetworkError) {
        var index = 0
        let count = bytes.count
        // An empty piece says nothing about a CR that ended the one before.
        guard count > 0 else { return }
        if afterCR, bytes[index] == 0x0A { index += 1 }
        afterCR = false
        while index < count {
            var end = index
            while end < count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            guard end < count else {
                guard line.count + (count - index) <= maximumLineLength else { throw tooLong("A line") }
                line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<count]))
                return
            }
            if line.isEmpty {
                try process(UnsafeBufferPointer(rebasing: bytes[index..<end]), into: &events)
            } else {
                guard line.count + (end - index) <= maximumLineLength else { throw tooLong("A line") }
                line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                let whole = line
                line.removeAll(keepingCapacity: true)
                try whole.withUnsafeBufferPointer { (whole) throws(NetworkError) in try process(whole, into: &events) }
            }
            if bytes[end] == 0x0D {
                if end + 1 < count {
                    if bytes[end + 1] == 0x0A { end += 1 }
                } else {
                    afterCR = true
                }
            }
            index = end + 1
        }
    }

    private func tooLong(_ what: String) -> NetworkError {
        NetworkError(.responseTooLarge, "\(what) of the event stream is longer than the limit.")
    }

    /// One whole line, without its end.
    private mutating func process(_ line: UnsafeBufferPointer<UInt8>, into events: inout [Event]) throws(NetworkError) {
        guard line.count <= maximumLineLength else { throw tooLong("A line") }
        guard let first = line.first else { return dispatch(into: &events) }
        if first == UInt8(ascii: ":") { return }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.count
        guard colon <= Self.maximumFieldNameLength else {
            throw NetworkError(
                .responseTooLarge,
                "A field name of the event stream is longer than \(Self.maximumFieldNameLength) bytes.")
        }
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == 0x20 { valueStart += 1 }
        let name = UnsafeBufferPointer(rebasing: line[0..<colon])
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<line.count])
        switch name.count {
        case 4 where name.elementsEqual("data".utf8):
            guard data.count + value.count + (hasData ? 1 : 0) <= maximumEventSize else {
                throw NetworkError(.responseTooLarge, "An event of the stream has more data than the limit.")
            }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case 5 where name.elementsEqual("event".utf8):
            type = Array(value)
        case 2 where name.elementsEqual("id".utf8):
            guard !value.contains(0) else { return }
            guard value.count <= Self.maximumIDLength else {
                throw NetworkError(
                    .responseTooLarge, "An event ID of the stream is longer than \(Self.maximumIDLength) bytes.")
            }
            idBuffer = Array(value)
            setsID = true
        case 5 where name.elementsEqual("retry".utf8):
            guard !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) else { return }
            // A number past any sensible wait is the longest one.
            retry = value.count > 9 ? 999_999_999 : Int(String(decoding: value, as: UTF8.self))
        default:
            return
        }
    }

    private mutating func dispatch(into events: inout [Event]) {
        lastEventID = String(decoding: idBuffer, as: UTF8.self)
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            type.removeAll()
            setsID = false
        }
        guard hasData else { return }
        events.append(
            Event(
                type: type.isEmpty ? "message" : String(decoding: type, as: UTF8.self),
                data: String(decoding: data, as: UTF8.self), id: lastEventID, setsID: setsID))
    }
}
