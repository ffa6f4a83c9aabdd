import Foundation

/// Where log entries go. Courier has no logging dependency: `OSLogSink` writes to the
/// unified log on Apple platforms, ``PrintLogSink`` to standard output, and a sink for
/// swift-log or a file takes a few lines.
public protocol LogSink: Sendable {
    /// Writes one entry.
    /// - Parameter entry: The entry: its ``LogEntry/line``, or its parts to mark them apart.
    func write(_ entry: LogEntry)
}

/// One line of a ``LoggingInterceptor``'s log, in two parts: a ``summary`` that says nothing
/// about the user, and ``details`` that may (the URL and its query, headers, bodies), with
/// tokens, signatures and passwords already redacted from both.
public struct LogEntry: Sendable, Hashable {
    /// What an entry reports.
    public enum Event: Sendable, Hashable {
        /// A request about to be sent.
        case request
        /// An answer, with any status.
        case response
        /// A request that failed with an error.
        case failure
        /// The headers or a body of a request or answer (with `includesDetails`).
        case detail
    }

    /// How much an entry matters, for sinks that filter or route by level.
    public enum Level: Int, Sendable, Hashable, Comparable {
        /// Headers, bodies and `curl` commands (``Event/detail``).
        case debug
        /// A request, an answer with a status below 400, or a request that was cancelled.
        case info
        /// An answer with a status of 400 or more.
        case warning
        /// A request that failed with an error (``Event/failure``), unless it was cancelled.
        case error

        /// Whether `lhs` matters less than `rhs`.
        /// - Parameters:
        ///   - lhs: A level.
        ///   - rhs: Another level.
        /// - Returns: `true` when `lhs` comes before `rhs` in debug, info, warning, error.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the entry reports.
    public var event: Event
    /// How much it matters.
    public var level: Level
    /// Direction, method, status or error code, duration and size: `← 200 GET (3 ms, 412 bytes)`.
    public var summary: String
    /// The URL (secrets redacted), or the headers or body snippet of a detail entry.
    public var details: String

    /// Creates an entry.
    /// - Parameters:
    ///   - event: What it reports.
    ///   - level: How much it matters; by default ``Level/error`` for a failure,
    ///     ``Level/debug`` for a detail and ``Level/info`` otherwise.
    ///   - summary: The part that says nothing about the user.
    ///   - details: The part that may.
    public init(event: Event, level: Level? = nil, summary: String, details: String) {
        self.event = event
        self.level =
            level
            ?? {
                switch event {
                case .failure: .error
                case .detail: .debug
                case .request, .response: .info
                }
            }()
        self.summary = summary
        self.details = details
    }

    /// The whole line: the summary, then the details.
    public var line: String { details.isEmpty ? summary : "\(summary) \(details)" }
}

/// A ``LogSink`` that prints each entry's line to standard output.
public struct PrintLogSink: LogSink {
    /// Creates the sink.
    public init() {}

    /// Prints the entry's line.
    /// - Parameter entry: The entry.
    public func write(_ entry: LogEntry) { print(entry.line) }
}

/// Logs one line per pass through it: method, URL, status (or error) and duration, and on
/// request the headers and bodies. Token, signature, `Authorization`, `Cookie`, passwords and
/// the other names of the client's ``NetworkClient/Configuration/redactor`` are redacted in
/// URLs, headers and bodies (see ``Redactor``).
///
/// Put it last (innermost) to log exactly what goes on the wire, once per attempt.
///
/// ```text
/// → GET http://127.0.0.1:8080/api/orders?page=1&token=<redacted>&sign=<redacted>
/// ← 200 GET (3 ms, 412 bytes) http://127.0.0.1:8080/api/orders?page=1&token=<redacted>&sign=<redacted>
/// ```
public struct LoggingInterceptor: Interceptor {
    private let sink: any LogSink
    private let includesDetails: Bool
    private let includesCurlCommands: Bool
    private let includesPhases: Bool

    /// Creates the layer.
    /// - Parameters:
    ///   - sink: Where lines go.
    ///   - includesDetails: Whether headers and bodies (a bounded snippet) are logged too.
    ///   - includesCurlCommands: Whether each request is also logged as a redacted `curl`
    ///     command (``HTTPRequest/curlCommand(redactor:bodyLimit:)``, bodies up to 16 KB), at
    ///     ``LogEntry/Level/debug``.
    ///   - includesPhases: Whether an answer's line ends with the phases its transport
    ///     measured (``RequestTimeline/Phases``): `[dns 0.05 ms, connect 0.12 ms, …]`, "not
    ///     measured" for a phase the transport does not measure.
    public init(
        sink: any LogSink = PrintLogSink(), includesDetails: Bool = false, includesCurlCommands: Bool = false,
        includesPhases: Bool = false
    ) {
        self.sink = sink
        self.includesDetails = includesDetails
        self.includesCurlCommands = includesCurlCommands
        self.includesPhases = includesPhases
    }

    /// ``InterceptorLayer/logging``.
    public var layer: InterceptorLayer { .logging }

    /// The largest body a logged `curl` command shows; a larger one is shown by its size.
    static let curlBodyLimit = 16 << 10

    /// Logs the request and its outcome around `next`.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Its ``InterceptorContext/redactor`` hides secrets.
    ///   - next: The inner layers.
    /// - Returns: The response of the inner layers.
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        let method = request.method.rawValue
        let redactor = context.redactor
        let url = request.redactedURL(redactor: redactor)
        sink.write(LogEntry(event: .request, summary: "→ \(method)", details: url))
        if includesCurlCommands {
            let command = request.curlCommand(redactor: redactor, bodyLimit: Self.curlBodyLimit)
            sink.write(LogEntry(event: .detail, summary: "  curl:", details: command))
        }
        if includesDetails {
            let headers = request.wireHeaders
            sink.write(
                LogEntry(event: .detail, summary: "  headers:", details: Self.line(redactor.redact(headers: headers))))
            switch request.body {
            case .multipart(let form):
                let files = form.files.map { "\($0.name) (\($0.filename), \($0.contentType))" }
                let fields = redactor.redact(
                    body: Data(form.fields.encoded.utf8), contentType: "application/x-www-form-urlencoded",
                    limit: NetworkError.snippetLimit)
                sink.write(
                    LogEntry(event: .detail, summary: "  multipart:", details: "fields \(fields); files \(files)"))
            case .file(let file, _):
                sink.write(LogEntry(event: .detail, summary: "  body:", details: "file \(file.lastPathComponent)"))
            default:
                if let body = request.body.encoded, !body.isEmpty {
                    let excerpt = redactor.redact(
                        body: body, contentType: headers["Content-Type"], limit: NetworkError.snippetLimit)
                    sink.write(LogEntry(event: .detail, summary: "  body:", details: excerpt))
                }
            }
        }
        let start = ContinuousClock.now
        var request = request
        if includesPhases { request.measuresExchange = true }
        do {
            let response = try await next(request)
            let size = response.bodyFile != nil ? "to a file" : "\(response.body.count) bytes"
            var summary = "← \(response.status) \(method) (\(milliseconds(since: start)) ms, \(size))"
            if includesPhases { summary += " [\(RequestTimeline.Phases(of: response))]" }
            let level: LogEntry.Level = response.status >= 400 ? .warning : .info
            sink.write(LogEntry(event: .response, level: level, summary: summary, details: url))
            if includesDetails {
                let headers = redactor.redact(headers: response.headers)
                sink.write(LogEntry(event: .detail, summary: "  response headers:", details: Self.line(headers)))
                if !response.body.isEmpty {
                    let excerpt = redactor.redact(
                        body: response.body, contentType: response.headers["Content-Type"],
                        limit: NetworkError.snippetLimit)
                    sink.write(LogEntry(event: .detail, summary: "  body:", details: excerpt))
                }
            }
            return response
        } catch {
            let code = (error as? NetworkError)?.code.rawValue ?? "error"
            let summary = "✗ \(code) \(method) (\(milliseconds(since: start)) ms)"
            // A cancelled request is the app's own doing, not a failure to alert on.
            let level: LogEntry.Level = (error as? NetworkError)?.code == .cancelled ? .info : .error
            sink.write(LogEntry(event: .failure, level: level, summary: summary, details: url))
            throw error
        }
    }

    /// Redacted header fields on one line.
    private static func line(_ headers: HTTPHeaders) -> String {
        headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ")
    }

    private func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = ContinuousClock.now - start
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
}

extension Interceptor where Self == LoggingInterceptor {
    /// A ``LoggingInterceptor``.
    /// - Parameters:
    ///   - sink: Where lines go.
    ///   - includesDetails: Whether headers and bodies are logged too.
    ///   - includesCurlCommands: Whether each request is also logged as a redacted `curl`
    ///     command.
    ///   - includesPhases: Whether an answer's line ends with its phases.
    /// - Returns: The layer.
    public static func logging(
        sink: any LogSink = PrintLogSink(), includesDetails: Bool = false, includesCurlCommands: Bool = false,
        includesPhases: Bool = false
    ) -> Self {
        LoggingInterceptor(
            sink: sink, includesDetails: includesDetails, includesCurlCommands: includesCurlCommands,
            includesPhases: includesPhases)
    }
}
