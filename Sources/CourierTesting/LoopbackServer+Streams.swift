import Courier
import Foundation

extension LoopbackServer {
    /// Writes a streamed answer's body as the route says: each ``send(_:)-(Data)`` is one chunk of a
    /// `Transfer-Encoding: chunked` body, sent at once. See ``Response/stream(status:headers:_:)``.
    ///
    /// `@unchecked Sendable`: `dropped` is guarded by `lock`; the socket is written by one
    /// route at a time.
    public final class StreamWriter: @unchecked Sendable {
        private let socket: Int32
        private let lock = NSLock()
        private var dropped = false

        init(socket: Int32) { self.socket = socket }

        /// Sends bytes as one chunk.
        /// - Parameter bytes: The bytes (nothing is sent for none).
        /// - Returns: Whether they were sent: `false` once the client hung up or ``drop()`` ran.
        @discardableResult
        public func send(_ bytes: Data) -> Bool {
            guard !bytes.isEmpty, !isDropped else { return !isDropped }
            let chunk = Array(String(bytes.count, radix: 16).utf8) + [13, 10] + Array(bytes) + [13, 10]
            return Sockets.write(socket, chunk)
        }

        /// Sends text as UTF-8, as one chunk.
        /// - Parameter text: The text.
        /// - Returns: Whether it was sent.
        @discardableResult
        public func send(_ text: String) -> Bool { send(Data(text.utf8)) }

        /// Sends one Server-Sent Event: its fields, one `data:` line per line of `data`, and
        /// the blank line that ends it.
        /// - Parameters:
        ///   - data: The data.
        ///   - id: The `id:` field, if any.
        ///   - type: The `event:` field, if any.
        ///   - retry: The `retry:` field, in milliseconds, if any.
        /// - Returns: Whether it was sent.
        @discardableResult
        public func event(_ data: String, id: String? = nil, type: String? = nil, retry: Int? = nil) -> Bool {
            var text = ""
            if let type { text += "event: \(type)\n" }
            if let id { text += "id: \(id)\n" }
            if let retry { text += "retry: \(retry)\n" }
            for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
            return send(text + "\n")
        }

        /// Ends the answer by closing the connection without the body's last chunk: to the
        /// client, a dropped connection.
        public func drop() { lock.withLock { dropped = true } }

        var isDropped: Bool { lock.withLock { dropped } }

        /// The chunk that ends a complete body.
        static let lastChunk = Array("0\r\n\r\n".utf8)
    }
}

extension LoopbackServer.Response {
    /// An answer whose body the route writes as it goes, chunked: events of a stream, lines of an
    /// export. `body` runs once the head is sent; when it returns, the body ends (or, after
    /// ``LoopbackServer/StreamWriter/drop()``, the connection closes mid-body). The connection
    /// carries no other request afterwards. A delay (``delayed(by:)``) and
    /// ``LoopbackServer/Fault/closeBeforeResponding`` apply; the other faults do not (`drop()`
    /// is a stream's own).
    ///
    /// ```swift
    /// server.route("chat") { request in
    ///     .stream(headers: ["Content-Type": "text/event-stream"]) { writer in
    ///         writer.event(#"{"text":"Hel"}"#, id: "1")
    ///         try? await Task.sleep(for: .milliseconds(50))
    ///         writer.event(#"{"text":"lo"}"#, id: "2")
    ///     }
    /// }
    /// ```
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Header fields (`Transfer-Encoding` and `Connection` are added).
    ///   - body: Writes the body.
    /// - Returns: The answer.
    public static func stream(
        status: Int = 200, headers: HTTPHeaders = [:],
        _ body: @escaping @Sendable (LoopbackServer.StreamWriter) async -> Void
    ) -> Self {
        var response = Self(status: status, headers: headers)
        response.streamBody = body
        return response
    }
}
