import Foundation

extension HTTPArchive.Entry {
    /// An exchange as it went on the wire, its secrets hidden by `redactor` and by the values
    /// the layers noted as secret (``HTTPRequest/notes``): header fields, query and form pairs,
    /// JSON fields in both bodies, the URL's user name and password, and a token or signature
    /// wherever it appears.
    /// - Parameters:
    ///   - request: The request, as the transport got it.
    ///   - body: The request's body as sent, when known (a file's or multipart form's bytes are
    ///     known only to whoever read them), with its media type (a multipart form's names its
    ///     boundary); `nil` writes an in-memory body from the request.
    ///   - response: The answer.
    ///   - startedAt: When the exchange began.
    ///   - duration: How long it took.
    ///   - redactor: What to hide.
    ///   - bodyLimit: The most bytes of each body kept; `nil` keeps them whole.
    package init(
        request: HTTPRequest, body: HTTPArchive.SentBody?, response: HTTPResponse, startedAt: Date, duration: Duration,
        redactor: Redactor, bodyLimit: Int? = nil
    ) {
        let hiding = ArchiveRedaction(redactor: redactor, secretValues: request.notes.secretValues)
        var archived = HTTPArchive.Request(archiving: request, body: body, hiding: hiding, bodyLimit: bodyLimit)
        let responseType = response.headers["Content-Type"] ?? ""
        var content = HTTPArchive.Content(
            mimeType: responseType, bytes: hiding.body(response.body, contentType: responseType, limit: bodyLimit))
        content.size = response.body.count
        if let file = response.bodyFile {
            content.comment = "The body was written to the file \(file.lastPathComponent)."
        } else if response.streamedBody != nil {
            content.comment = "The body was read as a stream."
        } else if let bodyLimit, response.body.count > bodyLimit {
            content.comment = "Only the first \(bodyLimit) bytes are kept."
        }
        let version = response.httpVersion.map { "HTTP/\($0)" } ?? "HTTP/1.1"
        archived.httpVersion = version
        let timings = Self.timings(response.timings, total: duration)
        self.init(
            startedDateTime: Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(startedAt),
            // The sum of the phases, as the format defines it (TLS is part of connecting).
            time: [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
                .filter { $0 > 0 }.reduce(0, +),
            request: archived,
            response: HTTPArchive.Response(
                status: response.status, httpVersion: version, headers: hiding.headers(response.headers),
                content: content),
            timings: timings)
    }

    /// Notes how a recorded stream ended: a reader that stopped early in ``comment``, a failure
    /// (its message redacted as the exchange is) in the content's `streamError` and
    /// `streamErrorCode`.
    package mutating func recordStreamEnd(_ error: NetworkError?, of request: HTTPRequest, redactor: Redactor) {
        guard let error else { return }
        guard error.code != .cancelled else {
            comment = "The reader stopped after \(response.content.chunks?.count ?? 0) pieces."
            return
        }
        let hiding = ArchiveRedaction(redactor: redactor, secretValues: request.notes.secretValues)
        response.content.streamError = hiding.text(error.message)
        response.content.streamErrorCode = error.code.rawValue
    }

    /// The error a recorded stream ended with, if it failed.
    package var streamFailure: NetworkError? {
        guard let message = response.content.streamError else { return nil }
        return NetworkError(NetworkError.Code(rawValue: response.content.streamErrorCode ?? "transport"), message)
    }

    /// HAR's phases from Courier's timings (each measured from the start), or the whole time as
    /// waiting when the transport measured none.
    static func timings(_ timings: TransferTimings?, total: Duration) -> HTTPArchive.Timings {
        guard let timings else { return HTTPArchive.Timings(send: 0, wait: milliseconds(total), receive: 0) }
        let dns = milliseconds(timings.nameLookup)
        let connected = max(milliseconds(timings.connect), dns)
        let secured = max(milliseconds(timings.tlsHandshake), connected)
        let firstByte = max(milliseconds(timings.firstByte), secured)
        return HTTPArchive.Timings(
            dns: dns, connect: secured - dns, send: 0, wait: firstByte - secured,
            receive: max(milliseconds(timings.total) - firstByte, 0),
            ssl: timings.tlsHandshake > .zero ? secured - connected : -1)
    }

    /// A duration in milliseconds, to the microsecond.
    package static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return (Double(seconds) * 1000 + Double(attoseconds / 1_000_000_000_000) / 1000)
    }
}

extension HTTPArchive.Request {
    /// A request as it went on the wire, its secrets hidden as
    /// ``HTTPArchive/Entry/init(request:body:response:startedAt:duration:redactor:bodyLimit:)``
    /// hides them.
    package init(archiving request: HTTPRequest, body: HTTPArchive.SentBody?, redactor: Redactor) {
        self.init(
            archiving: request, body: body,
            hiding: ArchiveRedaction(redactor: redactor, secretValues: request.notes.secretValues), bodyLimit: nil)
    }

    init(archiving request: HTTPRequest, body: HTTPArchive.SentBody?, hiding: ArchiveRedaction, bodyLimit: Int?) {
        let requestBody = body.map(\.bytes) ?? request.body.encoded
        let headers = request.wireHeaders(contentType: body?.contentType ?? request.body.contentType)
        let contentType = headers["Content-Type"] ?? ""
        let wireURL = (try? request.wireURLText().text) ?? request.url.absoluteString
        self.init(
            method: request.method.rawValue, url: hiding.url(wireURL), headers: hiding.headers(headers),
            queryString: request.query.map {
                HTTPArchive.NameValue(name: $0.name, value: hiding.field($0.name, $0.value))
            },
            postData: requestBody.map {
                HTTPArchive.PostData(
                    mimeType: contentType, bytes: hiding.body($0, contentType: contentType, limit: bodyLimit))
            },
            bodySize: requestBody?.count ?? (request.body == .none ? 0 : -1))
        if requestBody == nil, request.body != .none {
            // A file or multipart form nobody read: its type, without its bytes.
            postData = HTTPArchive.PostData(mimeType: contentType, bytes: Data())
        }
    }
}

extension HTTPArchive {
    /// A request body as it went on the wire, for an archive.
    package struct SentBody: Sendable {
        /// Its bytes.
        package var bytes: Data
        /// Its media type, with a multipart form's boundary.
        package var contentType: String?

        package init(bytes: Data, contentType: String?) {
            self.bytes = bytes
            self.contentType = contentType
        }
    }
}

extension HTTPArchive {
    /// The archive as HAR text (``jsonData()``) with every one of `secretValues` hidden wherever
    /// it appears: also in an exchange whose own request did not carry it, such as the answer
    /// that gave a token.
    package func jsonData(hiding secretValues: some Collection<String>) -> Data {
        ArchiveRedaction(redactor: Redactor(names: []), secretValues: Array(secretValues))
            .hidingValues(inArchive: jsonData())
    }
}

extension HTTPArchive.PostData {
    /// The `boundary` of a multipart body's media type, as the redactor reads it.
    package var multipartBoundary: Data? {
        guard mimeType.lowercased().hasPrefix("multipart/") else { return nil }
        return BodyKind.boundary(in: mimeType).map { Data($0) }
    }
}
