import Foundation

extension Endpoint where Response == WebSocket {
    /// An endpoint that opens a WebSocket with ``NetworkClient/webSocket(_:options:)``: a `GET`
    /// to `path` (joined to the base URL as any endpoint's; `https` becomes `wss`), whose
    /// handshake goes through the client's layers.
    ///
    /// ```swift
    /// extension Endpoint where Response == WebSocket {
    ///     static func chat(room: Int) -> Self { .webSocket("chat", query: ["room": "\(room)"]) }
    /// }
    /// ```
    /// - Parameters:
    ///   - path: The path, relative to the base URL.
    ///   - query: Query parameters.
    ///   - headers: Header fields of the handshake.
    ///   - subprotocols: The subprotocols to offer, in order of preference
    ///     (`Sec-WebSocket-Protocol`); ``WebSocket/subprotocol`` tells the one chosen.
    /// - Returns: The endpoint.
    public static func webSocket(
        _ path: String, query: Parameters = [:], headers: HTTPHeaders = [:], subprotocols: [String] = []
    ) -> Self {
        var headers = headers
        if !subprotocols.isEmpty { headers[WebSocketUpgrade.protocolField] = subprotocols.joined(separator: ", ") }
        return Self(method: .get, path: path, query: query, headers: headers, decoding: .webSocket)
    }
}

extension ResponseDecoding where Response == WebSocket {
    /// A WebSocket is opened, not decoded: sent with ``NetworkClient/send(_:)``, such an
    /// endpoint throws ``NetworkError/Code/invalidRequest``.
    static var webSocket: Self {
        Self(checksContentType: false) { (_, _) throws(NetworkError) in
            throw NetworkError(
                .invalidRequest, "A WebSocket endpoint is opened with webSocket(_:options:), not sent with send(_:).")
        }
    }
}

extension NetworkClient {
    /// Opens a WebSocket. The handshake is a request like any other: it goes through the
    /// client's layers (the token, common parameters, headers, a signature), and when the
    /// server refuses it for the token or asks for a login, the session refreshes or logs in
    /// and the handshake is made again.
    ///
    /// The connection belongs to the session it was opened in: a logout or a login as someone
    /// else closes it, as does ``cancelAll()``.
    ///
    /// ```swift
    /// let socket = try await client.webSocket(.webSocket("chat"))
    /// ```
    /// - Parameters:
    ///   - endpoint: The handshake's endpoint (see ``Endpoint/webSocket(_:query:headers:subprotocols:)``).
    ///   - options: The message size limit, pings and close timeout.
    /// - Returns: The open connection.
    /// - Throws: ``NetworkError``: ``NetworkError/Code/httpStatus`` or
    ///   ``NetworkError/Code/business`` when the server answered without switching protocols,
    ///   ``NetworkError/Code/transport`` for an answer that does not complete the handshake,
    ///   ``NetworkError/Code/cancelled``, ``NetworkError/Code/timedOut``,
    ///   ``NetworkError/Code/tls``, ``NetworkError/Code/invalidRequest`` for a subprotocol that
    ///   is not a token.
    public nonisolated func webSocket(_ endpoint: Endpoint<WebSocket>, options: WebSocketOptions = WebSocketOptions())
        async throws(NetworkError) -> WebSocket
    {
        let generation = cancelAllGeneration
        let (first, epoch, timeline) = try await openWebSocket(endpoint, options: options, in: nil)
        // The socket holds the client, which opens it again; the client holds it only weakly.
        let socket = WebSocket(first: first, options: options) { () async throws(NetworkError) in
            await self.waitUntilReachable()
            let (connection, _, timeline) = try await self.openWebSocket(endpoint, options: options, in: epoch)
            timeline?.end(connection.response)
            return connection
        }
        // Kept before the check: a logout after it finds the socket and closes it.
        socket.setForget(keep(socket, in: epoch.number))
        var refused: NetworkError?
        if !epoch.isCurrent {
            refused = session.endError(of: epoch.number, while: "the WebSocket opened")
        } else if cancelAllGeneration != generation {
            // A cancelAll() between the handshake's end and the keeping above reached neither.
            refused = NetworkError(.cancelled, "The WebSocket was closed by cancelAll() as it opened.")
        }
        if let refused {
            socket.stop(refused, code: .goingAway)
            timeline?.end(nil, failure: refused, decoder: decodingContext.decoder)
            throw refused
        }
        timeline?.end(first.response)
        return socket
    }

    /// One connection of `endpoint`: its handshake through the layers, in session epoch
    /// `epoch` (a reconnection's) or the current one. A failed handshake's timeline is ended
    /// here; an opened one's is returned, for the caller to end once it keeps the connection.
    private nonisolated func openWebSocket(
        _ endpoint: Endpoint<WebSocket>, options: WebSocketOptions, in epoch: SessionEpoch?
    ) async throws(NetworkError) -> (
        connection: WebSocket.Connection, epoch: SessionEpoch, timeline: TimelineRecorder?
    ) {
        let built = try makeRequest(endpoint)
        let tls = try webSocketTLS(for: built)
        // Observers hear of the handshake, which ends at its answer, as of a stream's connection.
        let request = observing(built)
        let entry = register(in: epoch)
        defer { finish(entry) }
        let scope: RequestScope
        do {
            scope = try await self.scope(of: entry, in: epoch, request)
        } catch {
            let failure = await afterItsEpoch(error, of: entry)
            request.timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
            throw failure
        }
        let upgrade = WebSocketUpgrade(
            options: options, tls: tls, maximumBodySize: Int(clamping: request.maximumResponseBodySize ?? 1024 * 1024))
        let context = InterceptorContext(client: self, epoch: scope.epoch, skipping: endpoint.skippedLayers)
        // The recent traffic keeps each handshake as it keeps any exchange.
        let chain = self.chain(through: trafficLog.map { ArchivingTransport(inner: upgrade, log: $0) } ?? upgrade)
        let gate = self.gate
        let started = startedTask(priority: Task.currentPriority) {
            if let gate { try await gate.admit(request.url) }
            try scope.check("it was about to be sent")
            return try await chain.send(request, context: context, skipping: endpoint.skippedLayers)
        }
        scope.entry.attach { started.cancel() }
        let result = await withTaskCancellationHandler {
            await started.result
        } onCancel: {
            started.cancel()
        }
        do {
            let response = try result.get()
            guard let opened = upgrade.take(answering: response) else {
                upgrade.discard()
                throw refusal(response, for: request)
            }
            do throws(NetworkError) {
                try scope.check("it opened")
            } catch {
                opened.link.abort(error, code: .goingAway)
                throw error
            }
            return (
                WebSocket.Connection(link: opened.link, response: response, subprotocol: opened.subprotocol),
                scope.epoch, request.timeline
            )
        } catch {
            upgrade.discard()
            let failure = await failure(error, of: request, in: scope)
            request.timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
            throw failure
        }
    }

    /// Returns once the client's reachability monitor, if any, says the network is there (or
    /// the task is cancelled): a connection opens again when it can, without spinning.
    private nonisolated func waitUntilReachable() async {
        guard let monitor = configuration.reachability, monitor.status == .offline else { return }
        for await status in monitor.statusUpdates() where status != .offline { return }
    }

    /// The error for a handshake the server answered without switching protocols: its status,
    /// else the business code of its envelope, else the answer itself.
    private nonisolated func refusal(_ response: HTTPResponse, for request: HTTPRequest) -> NetworkError {
        do throws(NetworkError) {
            try validation.validate(response, method: .get, checksContentType: false)
        } catch {
            return error
        }
        if let code = response.envelope(decodingContext.decoder).failureCode,
            configuration.envelope.successKey != nil || !configuration.envelope.successCodes.contains(code)
        {
            var error = NetworkError(.business, "The server refused the WebSocket with business code \(code).")
                .answered(by: response)
            error.businessCode = code
            return error
        }
        return NetworkError(
            .transport,
            "The server answered the WebSocket's handshake with \(response.status), not 101 Switching Protocols."
        ).answered(by: response)
    }
}
