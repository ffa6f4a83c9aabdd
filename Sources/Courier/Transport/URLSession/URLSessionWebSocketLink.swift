import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A WebSocket on `URLSessionWebSocketTask`, Apple platforms' connection: a session of its own
/// whose delegate is the link, with the client's certificate authorities and pins checked in
/// its server-trust challenge.
///
/// Compiled on Linux too, so that it is type-checked where Courier is built, but not used there:
/// FoundationNetworking's task needs a libcurl built with WebSocket support, which Debian's is
/// not (the curl connection serves Linux instead).
///
/// `@unchecked Sendable`: `state` is guarded by `lock`; `session` and `task` are set once,
/// before the task starts.
final class URLSessionWebSocketLink: NSObject, WebSocketLink, URLSessionWebSocketDelegate, @unchecked Sendable {
    private let options: WebSocketOptions
    private let tls: TLSOptions
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var opening: CheckedContinuation<Result<String?, NetworkError>, Never>?
        var failure: NetworkError?
        var closeFrame: WebSocketClose?
        var ended = false
        var closers: [CheckedContinuation<Void, Never>] = []
        var onEnd: [@Sendable () -> Void] = []
        var keepAlive: Task<Void, Never>?
        var unansweredPings = 0
    }

    /// The fields `URLSessionWebSocketTask` writes itself.
    private static let upgradeFields: Set<String> = [
        "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
    ]

    private init(options: WebSocketOptions, tls: TLSOptions) {
        // Settled again: the options' properties may have been set past the initialiser's checks.
        self.options = WebSocketOptions(
            maximumMessageSize: options.maximumMessageSize, pingInterval: options.pingInterval,
            closeTimeout: options.closeTimeout)
        self.tls = tls
    }

    private static let unopened = NetworkError(.transport, "The WebSocket's connection was never made.")

    /// Opens a WebSocket with the request the layers built.
    /// - Returns: The answer, and for a `101` the connection with the subprotocol the server
    ///   chose. A refusal with a status (a `401`, say) is an answer without a connection, for the
    ///   layers to read; its body is not known.
    /// - Throws: ``NetworkError``: ``NetworkError/Code/cancelled``, ``NetworkError/Code/transport``.
    static func open(_ request: HTTPRequest, options: WebSocketOptions, tls: TLSOptions) async throws(NetworkError)
        -> (HTTPResponse, (link: any WebSocketLink, subprotocol: String?)?)
    {
        let (text, _) = try request.wireURLText()
        // `http(s)://` becomes `ws(s)://`, the schemes the task takes.
        guard text.hasPrefix("http"), let url = URL(string: "ws" + text.dropFirst(4)) else {
            throw NetworkError(.invalidRequest, "A WebSocket opens on an http or https URL.")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.timeoutInterval = max(1, min(request.timeout.seconds, 3.2e7))
        for field in request.headers where !upgradeFields.contains(field.name.lowercased()) {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        let link = URLSessionWebSocketLink(options: options, tls: tls)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: link, delegateQueue: nil)
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = link.options.maximumMessageSize
        link.session = session
        link.task = task
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let failure = link.lock.withLock { () -> NetworkError? in
                    if let failure = link.state.failure { return failure }
                    link.state.opening = continuation
                    return nil
                }
                if let failure { return continuation.resume(returning: .failure(failure)) }
                task.resume()
            }
        } onCancel: {
            link.abort(NetworkError(.cancelled, "The WebSocket's opening was cancelled."), code: .goingAway)
        }
        switch result {
        case .success(let subprotocol):
            link.startKeepAlive()
            let head = task.response as? HTTPURLResponse
            let response = HTTPResponse(status: 101, headers: head.map(HTTPHeaders.init) ?? [:], url: request.url)
            return (response, (link, subprotocol.flatMap { $0.isEmpty ? nil : $0 }))
        case .failure(let error):
            // The session holds its delegate until it is invalidated.
            session.invalidateAndCancel()
            // A refusal with a status goes up to the layers as an answer: a 401 is refreshed.
            if error.code != .cancelled, let head = task.response as? HTTPURLResponse, head.statusCode != 101 {
                return (HTTPResponse(status: head.statusCode, headers: HTTPHeaders(head), url: request.url), nil)
            }
            throw error
        }
    }

    // MARK: - The connection

    var closeFrame: WebSocketClose? { lock.withLock { state.closeFrame } }

    func send(_ message: WebSocketMessage) async throws(NetworkError) {
        guard let task else { throw Self.unopened }
        if let failure = lock.withLock({ state.failure }) { throw failure }
        let sent: URLSessionWebSocketTask.Message
        switch message {
        case .text(let text): sent = .string(text)
        case .binary(let data): sent = .data(data)
        }
        let error = await withCheckedContinuation { continuation in
            task.send(sent) { continuation.resume(returning: $0) }
        }
        if let error { throw failure(for: error) }
    }

    func receive() async throws(NetworkError) -> WebSocketMessage? {
        guard let task else { return nil }
        while true {
            let ending = lock.withLock { () -> Result<Void, NetworkError>? in
                if let failure = state.failure { return .failure(failure) }
                return state.ended ? .success(()) : nil
            }
            switch ending {
            case .failure(let error): throw error
            case .success: return nil
            case nil: break
            }
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    task.receive { continuation.resume(returning: $0) }
                }
            } onCancel: {
                abort(
                    NetworkError(.cancelled, "The task reading the WebSocket's messages was cancelled."),
                    code: .goingAway)
            }
            switch result {
            case .success(.string(let text)): return .text(text)
            case .success(.data(let data)): return .binary(data)
            case .success: continue
            case .failure(let error):
                // A close handshake ends the messages, whichever callback came first.
                if lock.withLock({ state.failure == nil && state.closeFrame != nil }) || task.closeCode != .invalid {
                    return nil
                }
                throw failure(for: error)
            }
        }
    }

    func ping() async throws(NetworkError) {
        guard let task else { throw Self.unopened }
        if let failure = lock.withLock({ state.failure }) { throw failure }
        let error = await withCheckedContinuation { continuation in
            task.sendPing { continuation.resume(returning: $0) }
        }
        if let error { throw failure(for: error) }
    }

    func close(_ close: WebSocketClose) async {
        guard let task else { return }
        if close.code.isAllowedOnTheWire {
            let code = URLSessionWebSocketTask.CloseCode(rawValue: Int(close.code.rawValue)) ?? .normalClosure
            let payload = close.payload
            task.cancel(with: code, reason: payload.count > 2 ? payload.dropFirst(2) : nil)
        } else {
            // A close without a code.
            task.cancel()
        }
        let timeout = options.closeTimeout
        let deadline = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
            } catch {
                return
            }
            self?.session?.invalidateAndCancel()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock { () -> Bool in
                if state.ended { return true }
                state.closers.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        deadline.cancel()
    }

    func abort(_ error: NetworkError, code: WebSocketCloseCode) {
        let opening = lock.withLock { () -> CheckedContinuation<Result<String?, NetworkError>, Never>? in
            guard state.failure == nil else { return nil }
            state.failure = error
            defer { state.opening = nil }
            return state.opening
        }
        task?.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .goingAway, reason: nil)
        opening?.resume(returning: .failure(error))
    }

    func whenEnded(_ action: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if state.ended { return true }
            state.onEnd.append(action)
            return false
        }
        if now { action() }
    }

    /// The error for one the task reported: how the connection ended, if it has.
    private func failure(for error: any Error) -> NetworkError {
        lock.withLock { () -> NetworkError in
            if let failure = state.failure { return failure }
            if let close = state.closeFrame {
                return NetworkError(.transport, "The WebSocket is closed (code \(close.code.rawValue)).")
            }
            return NetworkError(.transport, "The WebSocket's connection failed.", underlying: error)
        }
    }

    /// Pings every interval; two pings in a row without a pong end the connection.
    private func startKeepAlive() {
        guard let interval = options.pingInterval.map({ max($0, .milliseconds(100)) }) else { return }
        let keepAlive = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                let missed = lock.withLock { () -> Bool in
                    guard state.unansweredPings < 2 else { return true }
                    state.unansweredPings += 1
                    return false
                }
                if missed {
                    return abort(
                        NetworkError(.timedOut, "The server answered none of two pings, \(interval) apart."),
                        code: .goingAway)
                }
                task?.sendPing { [weak self] error in
                    guard error == nil, let self else { return }
                    lock.withLock { state.unansweredPings = 0 }
                }
            }
        }
        let ended = lock.withLock { () -> Bool in
            state.keepAlive = keepAlive
            return state.ended
        }
        if ended { keepAlive.cancel() }
    }

    // MARK: - The session's delegate

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        let opening = lock.withLock { () -> CheckedContinuation<Result<String?, NetworkError>, Never>? in
            defer { state.opening = nil }
            return state.opening
        }
        opening?.resume(returning: .success(`protocol`))
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        let close = WebSocketClose(
            code: WebSocketCloseCode(rawValue: UInt16(clamping: closeCode.rawValue)),
            reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
        lock.withLock { state.closeFrame = close }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let ending = lock.withLock { () -> (State, NetworkError)? in
            guard !state.ended else { return nil }
            state.ended = true
            let failure =
                state.failure
                ?? NetworkError(
                    .transport, "The WebSocket's handshake or connection failed.", underlying: error)
            // Without a close handshake the reader hears how the connection failed.
            if state.closeFrame == nil, (task as? URLSessionWebSocketTask)?.closeCode ?? .invalid == .invalid {
                state.failure = failure
            }
            let ending = state
            state.opening = nil
            state.closers = []
            state.onEnd = []
            state.keepAlive = nil
            return (ending, failure)
        }
        guard let (ending, failure) = ending else { return }
        ending.opening?.resume(returning: .failure(failure))
        for closer in ending.closers { closer.resume() }
        ending.keepAlive?.cancel()
        session.finishTasksAndInvalidate()
        for action in ending.onEnd { action() }
    }

    /// A redirect is never followed: it would take the token and signature to another place.
    /// The 3xx is the handshake's answer.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
            let trust = ServerTrust.answer(challenge, options: tls) {
                abort(ServerTrust.untrusted, code: .goingAway)
            }
            if let trust { return completionHandler(trust.disposition, trust.credential) }
        #endif
        // No credential is ever offered: a 401 comes back as the handshake's answer.
        completionHandler(.rejectProtectionSpace, nil)
    }
}

extension HTTPHeaders {
    /// The header fields of a `URLSession` answer.
    init(_ response: HTTPURLResponse) {
        self.init()
        for (name, value) in response.allHeaderFields {
            append(
                name: name as? String ?? String(describing: name), value: value as? String ?? String(describing: value))
        }
    }
}
