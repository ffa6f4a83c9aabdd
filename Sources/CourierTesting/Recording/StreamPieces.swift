import Courier
import Foundation

/// How a ``RecordingTransport`` plays back a recorded stream.
public enum StreamReplay: Sendable, Hashable {
    /// Every piece as soon as the reader asks: the test runs as fast as it can.
    case asFastAsPossible
    /// Each piece at the moment after the head it arrived when recorded.
    case realTime
}

/// The pieces of a streamed body as they arrive. `@unchecked Sendable`: guarded by `lock`.
final class StreamPieces: @unchecked Sendable {
    private let lock = NSLock()
    private var body = Data()
    private var arrivals: [(at: Duration, size: Int)] = []

    func add(_ bytes: Data, at moment: Duration) {
        lock.withLock {
            body.append(bytes)
            arrivals.append((moment, bytes.count))
        }
    }

    /// The body so far and when each piece arrived, taken once.
    func taken() -> (Data, [(at: Duration, size: Int)]) {
        lock.withLock {
            defer { (body, arrivals) = (Data(), []) }
            return (body, arrivals)
        }
    }

    /// The pieces of a body of `total` bytes (once its secrets were hidden, perhaps not the
    /// size it arrived with): each ends where it ended on arrival, the last at `total`.
    static func chunks(_ arrivals: [(at: Duration, size: Int)], total: Int) -> [HTTPArchive.Chunk] {
        var chunks: [HTTPArchive.Chunk] = []
        var end = 0
        var placed = 0
        for (index, arrival) in arrivals.enumerated() {
            end += arrival.size
            let upTo = index == arrivals.count - 1 ? total : min(end, total)
            chunks.append(
                HTTPArchive.Chunk(time: HTTPArchive.Entry.milliseconds(arrival.at), size: max(upTo - placed, 0)))
            placed = max(placed, upTo)
        }
        return chunks
    }

    /// A recorded body cut into its pieces, each its own `Data` (indexed from 0); bytes past the
    /// pieces' sizes go with the last, and a body without pieces is one piece.
    static func split(_ body: Data, _ chunks: [HTTPArchive.Chunk]) -> [(at: Duration, bytes: Data)] {
        guard !chunks.isEmpty else { return [(.zero, body)] }
        var pieces: [(at: Duration, bytes: Data)] = []
        var start = body.startIndex
        for (index, chunk) in chunks.enumerated() {
            let left = body.endIndex - start
            let end = index == chunks.count - 1 ? body.endIndex : start + min(max(chunk.size, 0), left)
            // A moment past an hour, negative or not a number (a hand-edited file) is clamped.
            let time = chunk.time.isFinite ? min(max(chunk.time, 0), 3.6e6) : 0
            pieces.append((.microseconds(Int64(time * 1000)), Data(body[start..<end])))
            start = end
        }
        return pieces
    }
}
