import Foundation

/// The session's layer, outside every interceptor of the configuration: it attaches the token
/// of the request's epoch, and acts on what the answer asks. A refresh code or 401 renews the
/// token and sends the request again; a log-in code logs in again without the user and sends it
/// again; an ask-the-user code, or a log-in code after the login, ends the session, unless the
/// request was sent with a credential a renewal has replaced since (then it is sent again with
/// the new one, once). A request is sent at most four times: once, after a refresh, after a
/// login, and after someone else's renewal.
///
/// Its name is ``InterceptorLayer/token``: an endpoint that skips the token skips the whole
/// session. One that skips ``InterceptorLayer/reLogin`` keeps the token and its refresh, but
/// gets log-in and ask-the-user answers as they are (the login's own request does).
struct SessionLayer: Interceptor {
    let session: Session

    var layer: InterceptorLayer { .token }

    func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        let epoch = context.epoch
        // The refresh and the login send through the same client, without this layer; their
        // requests are the session's, which cancelAll() leaves alone.
        let client = { context.sessionClient() }
        let timeline = request.timeline
        guard var sent = try await session.credentialToSend(in: epoch, client: client, timeline: timeline) else {
            // Nobody is signed in: the request goes as it is, and its answer too.
            return try await next(request)
        }
        let logIns = !context.skippedLayers.contains(.reLogin)
        var response: HTTPResponse
        if let streaming = request.streaming, let answer = streaming.sessionAnswer {
            // An event of a stream carried the code: acted on as if this request's answer had,
            // for the credential the stream's connection was sent with.
            if let previous = streaming.previouslySent { sent = previous }
            response = answer
        } else {
            response = try await next(try attaching(sent.credential.accessToken, to: request))
            request.streaming?.sent = sent
        }
        var (refreshed, loggedIn, caughtUp) = (false, false, false)
        while let reaction = session.reaction(to: response, context, logIns: logIns) {
            switch reaction {
            case .askUser(let cause):
                // Refused for a credential a renewal has replaced since (on a backend that allows
                // one login, the session's own silent login): sent again with the new one.
                guard !caughtUp, let newer = session.current(newerThan: sent, in: epoch) else {
                    throw await session.end(epoch, cause, "The backend asked for the user to log in.")
                }
                caughtUp = true
                sent = newer
                timeline?.willResend(.newerToken)
            case .refresh(let cause):
                guard !refreshed else { return response }
                refreshed = true
                sent = try await waiting(.tokenRefresh, timeline) {
                    try await session.renewed(after: sent, in: epoch, for: .refresh(cause), client: client())
                }
                timeline?.willResend(.refreshedToken)
            case .logIn(let cause):
                guard !loggedIn else {
                    throw await session.end(epoch, cause, "The session expired and logging in again did not help.")
                }
                loggedIn = true
                sent = try await waiting(.logIn, timeline) {
                    try await session.renewed(after: sent, in: epoch, for: .logIn(cause), client: client())
                }
                timeline?.willResend(.afterLogIn)
            }
            response = try await next(try attaching(sent.credential.accessToken, to: request))
            request.streaming?.sent = sent
        }
        return response
    }

    /// `renewal`'s credential, the time it took recorded as a wait of `kind` (also when it
    /// fails).
    private func waiting(
        _ kind: RequestTimeline.WaitKind, _ timeline: TimelineRecorder?,
        _ renewal: () async throws -> Session.Sent
    ) async throws -> Session.Sent {
        let start = timeline?.now
        defer { if let start { timeline?.waited(kind, since: start) } }
        return try await renewal()
    }

    private func attaching(_ token: String, to request: HTTPRequest) throws(NetworkError) -> HTTPRequest {
        var request = request
        request.markAsSecret(token)
        switch session.placement {
        case .header(let name, let prefix):
            request.headers[name] = prefix + token
        case .parameter(let name):
            request.query.items.removeAll { $0.name == name }
            try request.addParametersIncludingJSON([name: token], merge: .replaceExisting)
        }
        return request
    }
}
