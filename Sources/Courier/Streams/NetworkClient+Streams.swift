import Foundation

extension NetworkClient {
    /// Sends an endpoint and returns its answer as soon as its head arrives, with the body to
    /// read as it comes: for exports, logs, or any format of your own.
    ///
    /// The request goes through every layer, as ``send(_:)``'s does: the token (refreshed, or
    /// after a silent login, when the answer asks), signing, common parameters, retries. An
    /// answer the client does not accept (an error status, or a JSON envelope with a failing
    /// code) throws the usual ``NetworkError`` with its body before any byte is read; a 2xx
    /// JSON answer is read whole (within the endpoint's deadline) and given as one piece.
    /// Both transports stream the body. `CurlTransport`, and `URLSessionTransport` on Apple
    /// platforms, slow the server down when the reader is behind; Linux `URLSession` cannot
    /// pause, so there a reader more than 8 MiB behind fails the stream with
    /// ``NetworkError/Code/responseTooLarge``. A transport of your own that returns whole
    /// answers gives the body as one piece.
    ///
    /// ```swift
    /// let answer = try await client.stream(.get("exports/today"))
    /// for try await piece in answer.body { try output.write(contentsOf: piece) }
    /// ```
    ///
    /// The stream counts as a request in flight until its body ends or the answer is released:
    /// ``cancelAll()`` and a logout close it. The endpoint's timeout is the deadline for the head; after it only
    /// ``StreamOptions/idleTimeout`` applies. No cache and no shared transfer is used.
    /// - Parameters:
    ///   - endpoint: What to send (its decoding is not used: the body is given as it is).
    ///   - options: The idle timeout and the buffer size.
    /// - Returns: The answer, its body still arriving.
    /// - Throws: ``NetworkError``, as ``send(_:)`` does.
    public nonisolated func stream(_ endpoint: Endpoint<Data>, options: StreamOptions = StreamOptions())
        async throws(NetworkError) -> StreamedResponse
    {
        try await stream(
            endpoint, streaming: StreamRequest(highWater: options.bufferSize, idleTimeout: options.idleTimeout))
    }

    /// ``stream(_:options:)`` for any endpoint: one connection, in flight until its body ends.
    nonisolated func stream<Response>(_ endpoint: Endpoint<Response>, streaming: StreamRequest)
        async throws(NetworkError) -> StreamedResponse
    {
        let entry = register()
        do {
            let (response, _) = try await openStream(endpoint, streaming: streaming, entry: entry, in: nil)
            // Held until the body ends or is released: an answer outlives the caller's reference
            // to the client, and the client's transport must stay.
            response.body.reading.whenEnded { [self] in finish(entry) }
            return response
        } catch {
            finish(entry)
            throw error
        }
    }

    /// One connection of a stream registered as `entry`, in session epoch `epoch` (the current
    /// one when `nil`): sent through the layers, its answer checked. From the answer on, the
    /// entry's cancellation (``cancelAll()``, a logout) closes the body.
    /// - Returns: The answer and the scope it was sent in.
    /// - Parameter onCancel: What else the entry's cancellation does once the body is closed
    ///   (an event stream, whose entry outlives each connection, ends it at once).
    nonisolated func openStream<Response>(
        _ endpoint: Endpoint<Response>, streaming: StreamRequest, entry: InFlightRegistry.Entry,
        in epoch: SessionEpoch?,
        onCancel: (@Sendable () -> Void)? = nil
    ) async throws(NetworkError) -> (StreamedResponse, RequestScope) {
        var request = try makeRequest(endpoint)
        request.streaming = streaming
        // A connection's timeline ends once its answer's head is in (the body's time is the
        // reader's).
        request = observing(request)
        let method = request.method
        // A stream's answer is never decoded as the endpoint's `Response`: nothing ahead.
        var streamed = endpoint.sharingIdenticalRequests(false)
        streamed.decoding.decodeAhead = nil
        do {
            let scope = try await scope(of: entry, in: epoch, request)
            let response = try await perform(
                request, of: streamed, in: scope,
                discard: { $0.streamedBody?.cancel(NetworkError(.cancelled, "The stream's session ended.")) },
                finish: { $0 })
            let body: ResponseBodyStream
            if let reading = response.streamedBody {
                body = ResponseBodyStream(reading)
            } else {
                try checkWhole(response, method: method)
                body = ResponseBodyStream(whole: response.body)
            }
            let redactor = configuration.redactor
            // Held weakly: a body its reader drops closes its connection (see `Reading`).
            // Not `scope`, which holds the entry (the entry would hold itself), nor the request's
            // stream state, which holds the credential it was sent with.
            var described = request
            described.streaming = nil
            entry.attach { [session, described, epoch = scope.epoch, weak reading = body.reading] in
                // A logout or the backend's end of the session: the end's own error.
                let error =
                    epoch.isCurrent
                    ? NetworkError(.cancelled, "The stream was cancelled (cancelAll()).")
                    : session.endError(of: epoch.number, while: "the stream was open")
                reading?.cancel(error.describing(described, redactor: redactor))
                onCancel?()
            }
            request.timeline?.end(response)
            return (StreamedResponse(response, body: body), scope)
        } catch {
            let failure = await afterItsEpoch(error, of: entry)
            request.timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
            throw failure
        }
    }

    /// Checks an answer to a stream that arrived whole: its status, and for a JSON envelope
    /// its business code (a failing one throws ``NetworkError/Code/business``).
    private nonisolated func checkWhole(_ response: HTTPResponse, method: HTTPMethod) throws(NetworkError) {
        try validation.validate(response, method: method, checksContentType: false)
        let media = response.mediaType ?? ""
        guard media == "application/json" || media.hasSuffix("+json"),
            response.envelope(decodingContext.decoder).failureCode != nil
        else { return }
        _ = try ResponseDecoding<EmptyResponse>.envelope.decode(response, decodingContext)
    }
}
