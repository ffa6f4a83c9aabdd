import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` on `URLSession`: one session per transport with a session-level delegate.
///
/// It sends one request and hands back its answer, never following a redirect itself: the
/// client follows redirects (see ``Transport``), so FoundationNetworking's faults there
/// (credentials kept on a redirect to another origin, a body dropped on a 307) never come into
/// play. A header with CR, LF or another control character fails with
/// ``NetworkError/Code/invalidRequest``, here as in the client (FoundationNetworking would drop
/// it silently and send the request without it: an `Authorization` header, say).
///
/// It works around the other faults of Linux `URLSession` (FoundationNetworking):
/// - the deadline is enforced here as an overall deadline (`URLSession`'s own timeout is only an
///   idle timeout, so a server that trickles bytes would never time out, and it truncates
///   sub-second timeouts to zero);
/// - a cancelled or timed-out request is answered at once, without waiting for `URLSession` to
///   wind the transfer down;
/// - a task is cancelled only once it has been resumed, and from one thread only (releasing the
///   transport cancels nothing), since FoundationNetworking can end the process when a task is
///   cancelled before it starts, or from two threads at once as it ends;
/// - a 401 with `WWW-Authenticate: Basic` is answered by the session delegate instead of hanging;
/// - a request that is not idempotent (``HTTPRequest/isIdempotent``) goes out on a connection
///   of its own: FoundationNetworking sends a request again, without its body, when a reused
///   connection closes before the answer, so a `POST` could reach the server twice;
/// - every request states its `Content-Type`, so a POST is never silently sent as a form;
/// - a download's memory stays flat when the disk is slower than the network (see
///   `DelegateQueue`);
/// - no URL cache and no credential storage.
///
/// What it cannot mend on Linux fails clearly instead: an IPv6 literal host
/// (`http://[::1]/`), and `https` to a pinned host or with custom certificate authorities, are
/// refused with a ``NetworkError`` naming `CurlTransport`, which handles both. Four it can neither mend nor detect on Linux, where
/// `CurlTransport` is the default for these reasons:
/// - when the session has stored cookies for a URL, FoundationNetworking replaces a request's
///   own `Cookie` header with them; send your own cookies through a session with
///   `httpShouldSetCookies` off, or through `CurlTransport`;
/// - an answer with a `Content-Length` from 2^63 - 512 up ends the process: FoundationNetworking
///   converts the length to an integer in its own header callback, which traps, before Courier
///   sees the answer (any request, not only a resumed download);
/// - so does a chunked body whose trailer is shaped like a status line (FoundationNetworking
///   takes it for a new answer, then stops: "Transfer completed, but there's no response");
/// - extra bytes after an answer (a body longer than its `Content-Length`, or a body on a
///   `204`, a `304` or an answer to `HEAD`) are read as the answer to the next request on that
///   connection.
public final class URLSessionTransport: Transport, CourierTransport {
    private let session: URLSession
    private let delegate: SessionDelegate
    #if canImport(FoundationNetworking)
        /// Shared with the single-use sessions of requests that are not idempotent.
        private let delegateQueue: OperationQueue
    #endif
    /// Certificate authorities and pins; honoured on Apple platforms only (see ``init(configuration:tls:)``).
    public let tls: TLSOptions

    /// Creates a transport with its own `URLSession`.
    /// - Parameters:
    ///   - configuration: The session configuration; ``defaultSessionConfiguration()`` by
    ///     default. Courier sets its delegate; caching is left as configured.
    ///   - tls: Certificate authorities and public-key pins, checked in the session's
    ///     server-trust challenge on Apple platforms. Linux `URLSession` never raises that
    ///     challenge, so there an `https` request to a host with pins, or with authorities
    ///     set, fails with ``NetworkError/Code/tls`` rather than go out unchecked: use
    ///     `CurlTransport`.
    public init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultSessionConfiguration(),
        tls: TLSOptions = TLSOptions()
    ) {
        self.tls = tls
        delegate = SessionDelegate(tls: tls)
        #if canImport(FoundationNetworking)
            let queue = DelegateQueue()
        #else
            let queue = OperationQueue()
        #endif
        queue.maxConcurrentOperationCount = 1
        queue.name = "Courier.URLSessionTransport"
        #if canImport(FoundationNetworking)
            delegateQueue = queue
        #endif
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// Invalidates the session once its tasks are done, cancelling none of them: every task
    /// still running then belongs to a call already answered, whose cancel is on its way on
    /// ``cancelCalls``. `invalidateAndCancel()` would cancel those tasks a second time from this
    /// queue, and on Linux two threads waiting on one task's queue at once let the task's
    /// removal overtake the first cancel, which then ends the process in FoundationNetworking
    /// ("Trying to access a behaviour for a task that in not in the registry"; seen once in CI,
    /// under AddressSanitizer, as a stopped call's transport was released).
    deinit {
        let session = self.session
        Self.sessionCalls.async { session.finishTasksAndInvalidate() }
    }

    /// Where calls into `URLSession` that wait for FoundationNetworking's process-wide work
    /// queue run. While an answer floods that queue they can wait for seconds; here they hold
    /// neither the caller (a Swift task, a deinit) nor Dispatch's shared threads, where
    /// deadline timers run.
    ///
    /// On this queue, in order: on Linux making and resuming tasks, and everywhere a session's
    /// invalidation, so a session is never invalidated before a task it is to make.
    static let sessionCalls = DispatchQueue(label: "Courier.URLSessionTransport.sessionCalls")
    /// On this queue: cancelling tasks, which must not wait behind tasks still to be made.
    static let cancelCalls = DispatchQueue(label: "Courier.URLSessionTransport.cancelCalls")

    /// An ephemeral configuration without URL cache or credential storage, ignoring local
    /// caches, with up to 16 connections per host.
    /// - Returns: A new configuration.
    public static func defaultSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 16
        return configuration
    }

    /// Sends one request; see ``Transport/send(_:)``.
    /// - Parameter request: The request.
    /// - Returns: The answer, with any status.
    /// - Throws: ``NetworkError``.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Here, not in the client, so a caller without one is checked too: FoundationNetworking
        // would drop a field with CR LF silently.
        try request.checkWireSafety()
        try checkSupported(request)
        let deadline = ContinuousClock.now + request.timeout
        let body = try await request.body.prepare()
        defer { body.discard() }
        // The total is known before the first byte goes: progress says "0 of N", not "0".
        if body.length > 0 { request.progress?.uploaded(0, of: body.length) }
        let call = Call(
            request: try Self.makeURLRequest(request, contentType: body.contentType), body: body,
            original: request, deadline: deadline,
            timedOut: NetworkError(.timedOut, "No complete answer within \(request.timeout)."))
        return try await perform(call, isIdempotent: request.isIdempotent)
    }

    /// Refuses malformed pin patterns, and what Linux `URLSession` cannot do safely.
    private func checkSupported(_ request: HTTPRequest) throws(NetworkError) {
        #if canImport(Security)
            // Before anything is sent, rather than in the server-trust challenge.
            _ = try tls.pins(for: request.url.host ?? "")
        #else
            let checksTrust = try !tls.pins(for: request.url.host ?? "").isEmpty || tls.certificateAuthorities != nil
            if checksTrust, request.url.scheme?.lowercased() == "https" {
                throw NetworkError(
                    .tls, "URLSession cannot check certificate authorities or pins on Linux; use CurlTransport.")
            }
            // FoundationNetworking refuses every IPv6 literal host (URLError -1000).
            if request.url.host?.utf8.contains(UInt8(ascii: ":")) == true {
                throw NetworkError(
                    .invalidRequest, "URLSession cannot reach an IPv6 literal host on Linux; use CurlTransport.")
            }
        #endif
    }

    /// Runs one `URLSession` task. On Linux a request that is not idempotent gets a session of
    /// its own, whose only connection is new: FoundationNetworking re-sends a request whose
    /// reused connection closed before the answer, whatever its method.
    private func perform(_ call: Call, isIdempotent: Bool) async throws -> HTTPResponse {
        #if canImport(FoundationNetworking)
            let session =
                isIdempotent
                ? self.session
                : URLSession(
                    configuration: self.session.configuration, delegate: delegate, delegateQueue: delegateQueue)
        #else
            let session = self.session
        #endif
        defer { if session !== self.session { Self.sessionCalls.async { session.finishTasksAndInvalidate() } } }
        return try await withTaskCancellationHandler {
            defer { call.settle() }
            return try await withCheckedThrowingContinuation { continuation in
                call.start(continuation, in: session, registry: delegate)
            }
        } onCancel: {
            call.stop(NetworkError(.cancelled, "The request was cancelled."))
        }
    }

    /// Turns a request into a `URLRequest` without its body, with the query encoded for the wire.
    /// - Parameter contentType: The prepared body's media type, used when no header sets one
    ///   (always for a multipart body, whose type carries its boundary).
    static func makeURLRequest(_ request: HTTPRequest, contentType: String?) throws(NetworkError) -> URLRequest {
        var urlRequest = URLRequest(url: try request.wireURL())
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // The overall deadline is enforced by `Call`. URLSession's own timeout is only an idle
        // timeout, and FoundationNetworking truncates it to whole seconds (0.8 s becomes 0 ms,
        // an instant timeout), so it is set past the deadline where it never fires first.
        // A year at most: FoundationNetworking multiplies it into an integer that would overflow
        // for a caller's "no timeout" (`.seconds(Int64.max)`).
        // A streamed answer goes on as long as its reader wants: its channel has the idle timeout.
        urlRequest.timeoutInterval =
            request.streaming == nil ? min(request.timeout.seconds, 3.2e7).rounded(.up) + 1 : 3.2e7
        for field in request.wireHeaders(contentType: contentType) {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        // A download is written byte for byte and resumed by byte offsets: ask for it as it is
        // (URLSession would ask for gzip and decode it).
        if request.download != nil, request.headers["Accept-Encoding"] == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        return urlRequest
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
