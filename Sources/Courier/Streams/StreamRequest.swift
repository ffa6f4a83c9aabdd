import Foundation

/// What a request that asks for a streamed answer tells the transport (``HTTPRequest/streaming``):
/// how much of the body to buffer and how long the reader waits for a byte. The transport
/// streams only a final answer with a 2xx status other than 204 that is not JSON; any other
/// answer (an error, an envelope with a business code, a redirect) arrives whole, as usual, so
/// every layer can read it.
///
/// `@unchecked Sendable`: `sent` is guarded by `lock`; everything else is immutable.
final class StreamRequest: @unchecked Sendable {
    let highWater: Int
    let idleTimeout: Duration?
    /// An answer the session layer takes as its first attempt's, without sending (a business
    /// code an event of the stream carried): it renews the credential first, as it would for
    /// an ordinary answer, then sends.
    let sessionAnswer: HTTPResponse?
    /// The credential the previous connection of the stream was sent with, for `sessionAnswer`.
    let previouslySent: Session.Sent?
    private let lock = NSLock()
    private var sentWith: Session.Sent?

    init(
        highWater: Int = 256 << 10, idleTimeout: Duration? = nil, sessionAnswer: HTTPResponse? = nil,
        previouslySent: Session.Sent? = nil
    ) {
        self.highWater = highWater
        self.idleTimeout = idleTimeout
        self.sessionAnswer = sessionAnswer
        self.previouslySent = previouslySent
    }

    /// How many bytes a transport that cannot pause (`URLSession` on Linux) lets its reader fall
    /// behind before it fails the stream: four times the buffer, 8 MiB at least.
    var lingeringLimit: Int { max(highWater * 4, 8 << 20) }

    /// The credential the session layer last sent this request with.
    var sent: Session.Sent? {
        get { lock.withLock { sentWith } }
        set { lock.withLock { sentWith = newValue } }
    }

    /// Whether an answer with this head is streamed rather than read whole.
    static func streams(status: Int, headers: HTTPHeaders) -> Bool {
        guard (200..<300).contains(status), status != 204 else { return false }
        let media = HTTPResponse(status: status, headers: headers).mediaType ?? ""
        return media != "application/json" && !media.hasSuffix("+json")
    }

    /// A channel for a streamed answer.
    func makeChannel() -> ByteChannel {
        ByteChannel(highWater: highWater, idleTimeout: idleTimeout)
    }
}
