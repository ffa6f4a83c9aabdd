import Foundation

/// Where the time of one request went, from the call to its answer: what it waited for inside
/// Courier, each attempt on the wire with its phases, the cache and shared-transfer outcome,
/// the decoding, and how it ended. A ``RequestObserver`` gets one when the request ends.
///
/// Every duration is measured with a monotonic clock. A phase a transport cannot measure is
/// `nil` ("not measured"), never zero: zero means it did not happen (a reused connection has no
/// name lookup or connect, plain HTTP no TLS handshake). A streamed answer's timeline ends when
/// its head arrives, and its attempt has no phases (the transports measure them at the body's
/// end); reading the body is the reader's time.
public struct RequestTimeline: Sendable, CustomReflectable {
    /// The request as its endpoint built it, before the layers, its secrets hidden.
    public var request: ObservedRequest
    /// When it began, by the wall clock.
    public var startedAt: Date
    /// What it waited for inside Courier before or between its attempts, in order.
    public var waits: [Wait]
    /// Each time it went to the transport: the first send, a retry, a send with a refreshed
    /// token or after a login. Empty for an answer from the cache, or from a transfer another
    /// request started (see ``sharedTransfer``).
    public var attempts: [Attempt]
    /// What the cache did, for an endpoint whose policy uses it; for
    /// ``NetworkClient/updates(for:)``, what became of the network's answer (the stored one
    /// shown first is not counted).
    public var cache: CacheOutcome?
    /// Whether the request shared its transfer with identical requests in flight.
    public var sharedTransfer: SharedTransferRole?
    /// How long checking and decoding answers took, also when the check failed (for
    /// ``NetworkClient/updates(for:)``, the stored answer's and the network's together); `nil`
    /// when none was checked. An envelope that a layer asked the code of (the session's layer
    /// with business codes, a clock correction) was decoded then, for the layer and the caller
    /// at once: that time is the attempt's, not this.
    public var decoding: Duration?
    /// From the call until the answer was decoded or the request failed.
    public var total: Duration
    /// The HTTP status of the answer it ended with, if one arrived.
    public var status: Int?
    /// Why it failed; `nil` when it succeeded.
    public var failure: NetworkError.Code?
    /// The trace it belongs to (32 lowercase hex digits), when a ``TraceContextInterceptor``
    /// sent at least one of its attempts with a `traceparent` (not for an answer from the cache,
    /// or from a transfer it joined).
    public var traceID: String?
    /// The caller's span the request's spans belong under (``TraceContext/parentID`` of the
    /// trace it was sent in), when there is one.
    public var parentID: String?
    /// Reads the business code from the answer's body, which nothing else in the timeline
    /// shows (a login's answer holds a token).
    var codeReader: BusinessCodeReader?

    /// The business code of the answer's envelope, read from its body when first asked (the
    /// body is let go then), or `nil` when it has none, its success flag says the call
    /// succeeded, or the body is not an envelope or is larger than 64 KiB.
    public var businessCode: BusinessCode? { codeReader?.code }

    /// What the timeline shows, printed or dumped: its public properties.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "request": request, "startedAt": startedAt, "waits": waits, "attempts": attempts, "cache": cache as Any,
                "sharedTransfer": sharedTransfer as Any, "decoding": decoding as Any, "total": total,
                "status": status as Any, "failure": failure as Any, "traceID": traceID as Any,
                "parentID": parentID as Any, "businessCode": businessCode as Any,
            ])
    }

    /// What the request waited for inside Courier.
    public struct Wait: Sendable, Hashable {
        /// What it waited for.
        public var kind: WaitKind
        /// When the wait began, since the request began.
        public var start: Duration
        /// How long it lasted.
        public var duration: Duration
    }

    /// What a request can wait for inside Courier.
    public enum WaitKind: String, Sendable, Hashable {
        /// The network to come back (``ReachabilityPolicy/waitForConnectivity(timeout:)``).
        case reachability
        /// A token refresh: its own, or one another request started.
        case tokenRefresh
        /// A login without the user.
        case logIn
        /// The retry layer's pause before sending again.
        case retryDelay
        /// The answer of an identical request's transfer it joined.
        case sharedTransfer
    }

    /// Why an attempt was sent.
    public enum AttemptReason: String, Sendable, Hashable {
        /// The first send.
        case first
        /// The retry layer sent it again after a failure or a retryable status.
        case retry
        /// The signing layer signed it again with the server's clock.
        case resigned
        /// Sent again with a refreshed token.
        case refreshedToken
        /// Sent again after a login without the user.
        case afterLogIn
        /// Sent again with a token another request's renewal brought.
        case newerToken
        /// A layer of the app's sent it again.
        case other
    }

    /// What the cache did for a request.
    public enum CacheOutcome: String, Sendable, Hashable {
        /// Nothing usable was stored: the network answered, and its answer was stored.
        case miss
        /// A fresh stored answer was given without the network.
        case hit
        /// The network confirmed the stored answer (`304`).
        case revalidated
        /// A stale stored answer was given while a refresh runs in the background.
        case stale
        /// The network could not be reached, and the stored answer was given.
        case offlineFallback
    }

    /// A request's part in a transfer shared by identical requests in flight
    /// (``Endpoint/sharingIdenticalRequests(_:)``).
    public enum SharedTransferRole: String, Sendable, Hashable {
        /// Its transfer was open for identical requests to join; its attempts are its own.
        case started
        /// It joined another request's transfer and waited for its answer: its timeline has
        /// no attempts, and a ``WaitKind/sharedTransfer`` wait.
        case joined
    }

    /// One send through the transport. When it followed redirects, its phases, connection and
    /// byte counts are those of the last exchange (each measured from that exchange's start),
    /// its ``start`` and ``duration`` those of all of them.
    public struct Attempt: Sendable, Hashable {
        /// 1 for the first.
        public var number: Int
        /// Why it was sent.
        public var reason: AttemptReason
        /// The request as it went to the transport (token, signature, common parameters), its
        /// secrets hidden.
        public var request: ObservedRequest
        /// When it began, since the request began.
        public var start: Duration
        /// How long it took, until the answer's body arrived or it failed.
        public var duration: Duration
        /// Its phases, as the transport measured them.
        public var phases: Phases
        /// The connection it went over.
        public var connection: Connection
        /// The bytes it sent and received.
        public var bytes: ByteCounts
        /// The HTTP status of its answer, if one arrived.
        public var status: Int?
        /// Why it failed, when it did.
        public var failure: NetworkError.Code?
        /// The `traceparent` it carried (one per attempt, each with its own span id).
        public var traceParent: String?
    }

    /// The phases of one attempt, each measured from its start until the phase ended; `nil`
    /// when the transport does not measure it, zero when it did not happen.
    public struct Phases: Sendable, Hashable {
        /// Until the host name was resolved.
        public var nameLookup: Duration?
        /// Until the TCP connection was made.
        public var connect: Duration?
        /// Until the TLS handshake was done.
        public var tlsHandshake: Duration?
        /// Until the request's last byte was sent.
        public var requestSent: Duration?
        /// Until the answer's first byte arrived (with `URLSessionTransport` on Linux, until
        /// its head reached Courier: measured by Courier, from when the transport took the
        /// request).
        public var firstByte: Duration?
        /// Until the answer's body was complete.
        public var bodyReceived: Duration?

        /// Creates phases; each is `nil` ("not measured") unless given.
        public init(
            nameLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil,
            requestSent: Duration? = nil, firstByte: Duration? = nil, bodyReceived: Duration? = nil
        ) {
            self.nameLookup = nameLookup
            self.connect = connect
            self.tlsHandshake = tlsHandshake
            self.requestSent = requestSent
            self.firstByte = firstByte
            self.bodyReceived = bodyReceived
        }
    }

    /// The connection an attempt went over; `nil` where the transport does not say.
    public struct Connection: Sendable, Hashable {
        /// The HTTP version: `1.1`, `2`.
        public var httpVersion: String?
        /// Whether an earlier request's connection was used again.
        public var isReused: Bool?
        /// The server's address, as the transport connected to it (`127.0.0.1:8080`).
        public var remoteAddress: String?
    }

    /// The bytes of one attempt, headers and body apart; `nil` where the transport does not
    /// count them.
    public struct ByteCounts: Sendable, Hashable {
        /// The request's head as the transport wrote it (libcurl counts HTTP/1.1 text, also for
        /// an HTTP/2 request).
        public var requestHeaders: Int?
        /// The request's body as sent.
        public var requestBody: Int?
        /// The answer's head, interim answers included.
        public var responseHeaders: Int?
        /// The answer's body as it came over the wire (compressed, when it was) where the
        /// transport counts it; otherwise the size of the body Courier kept.
        public var responseBody: Int?
    }
}

/// A request as an observer sees it: its secrets hidden, by the client's
/// ``NetworkClient/Configuration/redactor`` and by value (``HTTPRequest/markAsSecret(_:)``).
///
/// The URL and headers are redacted when read, so an observer that does not read them costs the
/// request nothing: read each once. Printed or dumped, it shows only what is hidden already.
public struct ObservedRequest: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The same for every attempt of one request, and for its timeline; never 0.
    public let id: UInt64
    /// The method.
    public let method: HTTPMethod
    /// What is redacted when read, behind one reference: an attempt or a timeline that holds
    /// the request stays cheap to copy.
    private let sent: Sent

    /// The request's parts as they were sent, and what hides their secrets.
    private final class Sent: Sendable {
        let url: URL
        let query: Parameters
        let headers: HTTPHeaders
        let redactor: Redactor
        let secretValues: [String]

        init(_ request: borrowing HTTPRequest) {
            url = request.url
            query = request.query
            headers = request.wireHeaders
            redactor = request.redactor
            secretValues = request.notes.secretValues
        }

        var hiding: ArchiveRedaction { ArchiveRedaction(redactor: redactor, secretValues: secretValues) }
    }

    init(_ request: borrowing HTTPRequest) {
        id = request.notes.call
        method = request.method
        sent = Sent(request)
    }

    /// The URL with its query, secrets hidden (redacted each time it is read).
    public var url: String {
        let suffix = sent.query.isEmpty ? "" : "?" + sent.query.encoded
        return sent.hiding.url(sent.url.absoluteString + suffix)
    }

    /// The header fields as sent (with the body's `Content-Type`), secrets hidden (redacted
    /// each time they are read).
    public var headers: HTTPHeaders {
        let hiding = sent.hiding
        return HTTPHeaders(sent.headers.fields.map { .init(name: $0.name, value: hiding.field($0.name, $0.value)) })
    }

    /// The method and the URL: `GET https://api.example.com/v1/orders?page=1&token=<redacted>`.
    public var description: String { "\(method.rawValue) \(url)" }

    /// Its id, method, URL and headers, secrets hidden.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "method": method, "url": url, "headers": headers])
    }

    /// Whether two are the same request as the observer sees them.
    /// - Parameters:
    ///   - lhs: One.
    ///   - rhs: The other.
    /// - Returns: `true` when their ids, methods, URLs and headers are equal.
    public static func == (lhs: ObservedRequest, rhs: ObservedRequest) -> Bool {
        lhs.id == rhs.id && lhs.method == rhs.method && lhs.url == rhs.url && lhs.headers == rhs.headers
    }

    /// Hashes its id, method and URL.
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(method)
        hasher.combine(url)
    }
}

extension RequestTimeline.Phases: CustomStringConvertible {
    /// The phases of an answer as its transport measured them: ``HTTPResponse/timings``, and
    /// the moments it measures besides when asked (for observers, or a log line with phases).
    /// - Parameter response: The answer.
    public init(of response: HTTPResponse) {
        if let timings = response.timings {
            self.init(
                nameLookup: timings.nameLookup, connect: timings.connect, tlsHandshake: timings.tlsHandshake,
                firstByte: timings.firstByte, bodyReceived: timings.total)
        } else {
            self.init()
        }
        if let facts = response.exchangeFacts {
            requestSent = facts.requestSent
            if firstByte == nil { firstByte = facts.headReceived }
            if bodyReceived == nil { bodyReceived = facts.bodyReceived }
        }
    }

    /// `dns 0.05 ms, connect 0.12 ms, tls 0 ms, sent not measured, first byte 1.30 ms, body
    /// 1.41 ms`: each phase since the attempt began, in milliseconds.
    public var description: String {
        [
            ("dns", nameLookup), ("connect", connect), ("tls", tlsHandshake), ("sent", requestSent),
            ("first byte", firstByte), ("body", bodyReceived),
        ].map { name, value in "\(name) \(value?.millisecondsText ?? "not measured")" }.joined(separator: ", ")
    }
}

extension Duration {
    /// `3.10 ms`, to the hundredth of a millisecond; `0 ms` for zero.
    var millisecondsText: String {
        let microseconds = components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
        guard microseconds != 0 else { return "0 ms" }
        let hundredths = (microseconds + 5) / 10
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100).\(fraction.count == 1 ? "0" + fraction : fraction) ms"
    }
}
