import Courier
import Foundation

extension FuzzTarget {
    static let streamTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "event-stream",
            summary:
                "an event stream gives the same events, last ID and retry however its bytes are cut into pieces, and stays within its bounds",
            check: eventStream),
        FuzzTarget(
            name: "json-lines",
            summary: "JSON Lines give the same records however their bytes are cut into pieces, each within the bound",
            check: jsonLines),
    ]

    /// The pieces of `bytes` cut where `cuts` (taken modulo the length) say.
    static func pieces(_ bytes: [UInt8], cuts: [UInt8]) -> [Data] {
        guard !bytes.isEmpty else { return [Data()] }
        let points = Set(cuts.map { Int($0) * bytes.count / 256 }).sorted()
        var start = 0
        var result: [Data] = []
        for point in points + [bytes.count] where point >= start {
            result.append(Data(bytes[start..<point]))
            start = point
        }
        return result
    }

    /// The first byte says how many of the next bytes are cut points; the rest is the stream.
    static func split(_ input: UnsafeRawBufferPointer) -> (stream: [UInt8], pieces: [Data])? {
        guard let first = input.first else { return nil }
        let count = Int(first % 16)
        guard input.count > count else { return nil }
        let cuts = Array(input.dropFirst().prefix(count))
        let stream = Array(input.dropFirst(count + 1))
        return (stream, pieces(stream, cuts: cuts))
    }

    private static func eventStream(_ input: UnsafeRawBufferPointer) {
        guard let (stream, pieces) = split(input) else { return }
        let bound = 512
        func run(_ pieces: [Data]) -> Result<([EventStreamParser.Event], String, Int?), NetworkError> {
            var parser = EventStreamParser(maximumLineLength: bound, maximumEventSize: bound)
            var events: [EventStreamParser.Event] = []
            do throws(NetworkError) {
                for piece in pieces { events += try parser.parse(piece) }
            } catch {
                return .failure(error)
            }
            return .success((events, parser.lastEventID, parser.retry))
        }
        let whole = run([Data(stream)])
        let cut = run(pieces)
        switch (whole, cut) {
        case (.success(let a), .success(let b)):
            require(a.0 == b.0, "events differ when cut: \(a.0) against \(b.0)")
            require(a.1 == b.1 && a.2 == b.2, "last ID or retry differ when cut")
            for event in a.0 {
                // The bound is on bytes received; each invalid byte reads as U+FFFD, three bytes.
                require(event.data.utf8.count <= 3 * bound, "an event over the bound was given")
                require(event.id.utf8.count <= EventStreamParser.maximumIDLength, "an ID over the bound was kept")
            }
        case (.failure(let a), .failure(let b)):
            require(a.code == .responseTooLarge && b.code == .responseTooLarge, "an error other than too large")
        default:
            require(false, "one way of cutting failed and the other did not")
        }
    }

    private static func jsonLines(_ input: UnsafeRawBufferPointer) {
        guard let (stream, pieces) = split(input) else { return }
        let bound = 512
        func run(_ pieces: [Data]) -> Result<[Data], NetworkError> {
            var parser = JSONLinesParser(maximumLineLength: bound)
            var records: [Data] = []
            do throws(NetworkError) {
                for piece in pieces { records += try parser.parse(piece) }
            } catch {
                return .failure(error)
            }
            if let last = parser.finish() { records.append(last) }
            return .success(records)
        }
        switch (run([Data(stream)]), run(pieces)) {
        case (.success(let a), .success(let b)):
            require(a == b, "records differ when cut")
            for record in a {
                require(record.count <= bound, "a record over the bound was given")
                require(!record.contains(0x0A) && !record.contains(0x1E), "a record holds a separator")
            }
        case (.failure(let a), .failure(let b)):
            require(a.code == .responseTooLarge && b.code == .responseTooLarge, "an error other than too large")
        default:
            require(false, "one way of cutting failed and the other did not")
        }
    }
}
