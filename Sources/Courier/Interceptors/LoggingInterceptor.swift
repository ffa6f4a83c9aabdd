import Foundation

/// Where log lines go. Courier has no logging dependency: adapt this to `os.Logger`,
/// swift-log or a file in a few lines.
public protocol LogSink: Sendable {
    /// Writes one line.
    /// - Parameter line: The line, without a trailing newline.
    func write(_ line: String)
}

/// A ``LogSink`` that prints to standard output.
public struct PrintLogSink: LogSink {
    /// Creates the sink.
    public init() {}

    /// Prints the line.
    /// - Parameter line: The line.
    public func write(_ line: String) { print(line) }
}

/// Logs one line per pass through it: method, URL, status (or error) and duration, and on
/// request the headers and bodies. Token, signature, `Authorization`, `Cookie`, passwords and
/// any configured key are redacted in URLs, headers and bodies.
///
/// Put it last (innermost) to log exactly what goes on the wire, once per attempt.
///
/// ```text
/// → GET http://127.0.0.1:8080/api/orders?page=1&token=<redacted>&sign=<redacted>
/// ← 200 GET http://127.0.0.1:8080/api/orders?page=1&token=<redacted>&sign=<redacted> (3 ms, 412 bytes)
/// ```
public struct LoggingInterceptor: Interceptor {
    private let sink: any LogSink
    private let includesDetails: Bool
    private let secretKeys: Set<String>

    /// Creates the layer.
    /// - Parameters:
    ///   - sink: Where lines go.
    ///   - includesDetails: Whether headers and bodies (a bounded snippet) are logged too.
    ///   - secretKeys: More parameter, header and JSON key names to redact.
    public init(sink: any LogSink = PrintLogSink(), includesDetails: Bool = false, secretKeys: Set<String> = []) {
        self.sink = sink
        self.includesDetails = includesDetails
        self.secretKeys = Set(secretKeys.map { $0.lowercased() })
    }

    /// ``InterceptorLayer/logging``.
    public var layer: InterceptorLayer { .logging }

    /// Logs the request and its outcome around `next`.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Not used.
    ///   - next: The inner layers.
    /// - Returns: The response of the inner layers.
    /// - Throws: Whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        let target = request.redactedDescription(extra: secretKeys)
        sink.write("→ \(target)")
        if includesDetails {
            sink.write("  headers: \(redacted(request.wireHeaders))")
            switch request.body {
            case .multipart(let form):
                let files = form.files.map { "\($0.name) (\($0.filename), \($0.contentType))" }
                sink.write("  multipart fields: \(snippet(Data(form.fields.encoded.utf8))); files: \(files)")
            case .file(let url, _):
                sink.write("  body: file \(url.lastPathComponent)")
            default:
                if let body = request.body.encoded, !body.isEmpty { sink.write("  body: \(snippet(body))") }
            }
        }
        let start = ContinuousClock.now
        do {
            let response = try await next(request)
            let size = response.bodyFile.map { "to file \($0.lastPathComponent)" } ?? "\(response.body.count) bytes"
            sink.write("← \(response.status) \(target) (\(milliseconds(since: start)) ms, \(size))")
            if includesDetails, !response.body.isEmpty { sink.write("  body: \(snippet(response.body))") }
            return response
        } catch {
            let code = (error as? NetworkError)?.code.rawValue ?? "error"
            sink.write("✗ \(code) \(target) (\(milliseconds(since: start)) ms)")
            throw error
        }
    }

    private func redacted(_ headers: HTTPHeaders) -> String {
        headers.fields.map { field in
            let hidden = Redaction.isSecret(field.name, extra: secretKeys)
            return "\(field.name): \(hidden ? Redaction.placeholder : field.value)"
        }.joined(separator: ", ")
    }

    private func snippet(_ body: Data) -> String {
        let text = String(decoding: body.prefix(NetworkError.snippetLimit), as: UTF8.self)
        let suffix = body.count > NetworkError.snippetLimit ? "… (\(body.count) bytes)" : ""
        return Redaction.redactText(text, extra: secretKeys) + suffix
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
    ///   - secretKeys: More names to redact.
    /// - Returns: The layer.
    public static func logging(
        sink: any LogSink = PrintLogSink(), includesDetails: Bool = false, secretKeys: Set<String> = []
    ) -> Self {
        LoggingInterceptor(sink: sink, includesDetails: includesDetails, secretKeys: secretKeys)
    }
}
