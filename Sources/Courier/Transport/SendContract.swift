import Foundation

/// What the client does, once, around every transport (``CurlTransport``,
/// ``URLSessionTransport``, a mock, or an app's own): a transport sends one request and hands
/// back its answer, and everything else about sending happens here.
///
/// - A request whose task is already cancelled is never handed to the transport, nor is a
///   redirected request once the task is cancelled.
/// - A request that cannot go on the wire (``HTTPRequest/checkWireSafety()``) fails with
///   ``NetworkError/Code/invalidRequest``, and so does each redirected request (Courier's
///   transports check each request themselves, so the client does not check it again).
/// - Redirects are followed by ``RedirectPolicy``, each one a request of its own, within the
///   first request's deadline: a later one's ``HTTPRequest/timeout`` is the time left, and a
///   ``NetworkError/Code/timedOut`` at that deadline names the first request's timeout.
/// - For Courier's transports a multipart form is encoded once, before the first request (in
///   memory, or in a temporary file removed when the last one has ended), so a redirected
///   request sends the same bytes; the first request's timeout is then the time left too. An
///   app's transport (a mock too) gets the form as the request carries it.
/// - The deadline holds for a transport that does not keep it itself: at the deadline the
///   transport's work is cancelled and the request fails with ``NetworkError/Code/timedOut``.
/// - A body past ``HTTPRequest/maximumResponseBodySize`` (a download's successful answer: past
///   ``DownloadTarget/maximumSize``) fails with ``NetworkError/Code/responseTooLarge``
///   (Courier's transports stop reading it there; for another, it is checked once the body is
///   whole).
/// - An answer without ``HTTPResponse/url`` gets the URL of the request it answers.
struct SendContract: Transport {
    /// The transport that sends each request.
    let transport: any Transport
    /// Whether `transport` is one of Courier's, which keep the deadline and check each request
    /// for the wire themselves: then no timer of the client's runs beside it, and no check is
    /// made twice.
    private let isCourier: Bool

    init(_ transport: any Transport) {
        self.transport = transport
        isCourier = transport is any CourierTransport
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if !isCourier { try request.checkWireSafety() }
        let deadline = ContinuousClock.now + request.timeout
        var current = request
        // A form is encoded once, here, for the request and a 307 or 308 that sends it again.
        let form = isCourier ? try await Self.encodedForm(of: request) : nil
        defer { form?.discard() }
        if let form {
            current.body = Self.body(of: form)
            // As the transport would have sent it: the form's type, with its boundary, wins.
            current.headers["Content-Type"] = form.contentType
        }
        for hop in 0...RedirectPolicy.maximumRedirects {
            guard !Task.isCancelled else {
                throw NetworkError(.cancelled, "The request was cancelled before it was sent.")
            }
            if hop > 0 || form != nil {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else {
                    throw NetworkError(.timedOut, "No complete answer within \(request.timeout).")
                }
                current.timeout = left
            }
            var response: HTTPResponse
            do {
                // Courier's transports keep the deadline: no frame of the client's between.
                if isCourier {
                    response = try await transport.send(current)
                } else {
                    response = try await exchange(current, until: deadline, timeout: request.timeout)
                }
            } catch let error as NetworkError
                where current.timeout != request.timeout && error.code == .timedOut && .now >= deadline
            {
                // This request's timeout was the time left: the deadline the caller set is the
                // first request's. Only the words change: a head that arrived stays with it.
                var error = error
                error.message = "No complete answer within \(request.timeout)."
                throw error
            }
            if let limit = Self.limit(of: response, to: current), Int64(response.body.count) > limit {
                throw ResponseBodySink.tooLarge(limit)
            }
            guard
                let next = try RedirectPolicy.next(after: response, for: current, hasBody: current.hasBody)
            else {
                // The URL the answer came from, after any redirect (its query aside).
                if response.url == nil { response.url = current.url }
                return response
            }
            if !isCourier { try next.checkWireSafety() }
            current = next
        }
        throw NetworkError(.transport, "More than \(RedirectPolicy.maximumRedirects) redirects.")
    }

    /// `request`'s multipart form, encoded (in memory, or in a temporary file above its
    /// threshold), or `nil` for any other body: each hop sends the same bytes, and a file the
    /// form reads that changes meanwhile does not change the redirected request.
    private static func encodedForm(of request: HTTPRequest) async throws(NetworkError) -> PreparedBody? {
        guard case .multipart = request.body else { return nil }
        guard !Task.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled before it was sent.")
        }
        // Before any file is read, and before the form's type replaces the request's own: a
        // request unfit for the wire is refused as the transport would refuse it.
        try request.checkWireSafety()
        return try await request.body.prepare()
    }

    /// An encoded form as the body each hop sends, which its transport prepares again at no
    /// cost: the bytes, or the file.
    private static func body(of form: PreparedBody) -> HTTPBody {
        let contentType = form.contentType ?? "multipart/form-data"
        switch form.content {
        case .none: return .none
        case .data(let data): return .data(data, contentType: contentType)
        case .file(let url, _): return .file(url, contentType: contentType)
        }
    }

    /// The most bytes `response`'s body may have: a download's own limit for a successful
    /// answer (which a transport that writes no file hands back in memory), else the request's.
    private static func limit(of response: HTTPResponse, to request: HTTPRequest) -> Int64? {
        if let download = request.download, (200..<300).contains(response.status) { return download.maximumSize }
        return request.maximumResponseBodySize
    }

    /// One request through a transport that does not keep deadlines itself, cancelled at
    /// `deadline`; whatever it hands back once the deadline passed (its error, or an
    /// answer it finished anyway) is ``NetworkError/Code/timedOut``. A transport must stop when
    /// its task is cancelled: until it does, the caller waits.
    private func exchange(
        _ request: HTTPRequest, until deadline: ContinuousClock.Instant, timeout: Duration
    ) async throws -> HTTPResponse {
        let work = Task { try await transport.send(request) }
        let passed = Locked(false)
        let timer = Deadlines.shared.arm(at: deadline) {
            passed.withLock { $0 = true }
            work.cancel()
        }
        defer { Deadlines.shared.disarm(timer) }
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        if passed.withLock({ $0 }), !Task.isCancelled {
            throw NetworkError(.timedOut, "No complete answer within \(timeout).")
        }
        return try result.get()
    }
}

/// One of Courier's transports: it keeps ``HTTPRequest/timeout`` as an overall deadline and
/// stops at once when its task is cancelled, and it checks each request for the wire
/// (``HTTPRequest/checkWireSafety()``) itself, for a caller without a client. The client runs
/// no timer beside it, and makes no check twice.
protocol CourierTransport {}
