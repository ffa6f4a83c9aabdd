import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LoopbackServer {
    /// One client connection, served on its own thread: read a request, answer it, repeat
    /// while the connection is kept alive.
    struct Connection {
        let socket: Int32
        let server: LoopbackServer
        private var buffer: [UInt8] = []

        init(socket: Int32, server: LoopbackServer) {
            self.socket = socket
            self.server = server
        }

        mutating func run() {
            while let request = readRequest() {
                server.record(.received(method: request.method, target: request.target), request: request)
                let response = respond(to: request)
                guard serve(response, to: request) else { return }
                let connection = request.headers["Connection"]?.lowercased()
                if connection == "close" { return }
            }
        }

        // MARK: Reading

        /// Reads one whole request, or `nil` when the client hung up or sent garbage.
        private mutating func readRequest() -> Request? {
            guard let headerEnd = fill(until: { $0.firstRange(of: Self.headerTerminator)?.upperBound }) else {
                return nil
            }
            let head = String(decoding: buffer[..<(headerEnd - 4)], as: UTF8.self)
            buffer.removeFirst(headerEnd)
            var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let requestLine = lines.removeFirst().split(separator: " ")
            guard requestLine.count == 3 else { return nil }
            var headers = HTTPHeaders()
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.add(
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            if headers["Expect"]?.lowercased() == "100-continue" {
                guard write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return nil }
            }
            let chunked = headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true
            let body: [UInt8]
            if chunked {
                guard let decoded = readChunkedBody() else { return nil }
                body = decoded
            } else {
                let length = Int(headers["Content-Length"] ?? "0") ?? 0
                guard fill(until: { $0.count >= length ? length : nil }) != nil else { return nil }
                body = Array(buffer[..<length])
                buffer.removeFirst(length)
            }
            return Request(
                method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: Data(body),
                wasChunked: chunked)
        }

        private mutating func readChunkedBody() -> [UInt8]? {
            var body: [UInt8] = []
            while true {
                guard let lineEnd = fill(until: { $0.firstRange(of: Self.lineTerminator)?.upperBound }) else {
                    return nil
                }
                let sizeText = String(decoding: buffer[..<(lineEnd - 2)], as: UTF8.self)
                buffer.removeFirst(lineEnd)
                guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { return nil }
                if size == 0 {
                    // Trailers (ignored) end with an empty line.
                    while true {
                        guard let end = fill(until: { $0.firstRange(of: Self.lineTerminator)?.upperBound }) else {
                            return nil
                        }
                        buffer.removeFirst(end)
                        if end == 2 { return body }
                    }
                }
                guard fill(until: { $0.count >= size + 2 ? size + 2 : nil }) != nil else { return nil }
                body.append(contentsOf: buffer[..<size])
                buffer.removeFirst(size + 2)
            }
        }

        /// Reads until `complete` finds what it needs in the buffer; `nil` on hang-up or error.
        private mutating func fill(until complete: ([UInt8]) -> Int?) -> Int? {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                if let found = complete(buffer) { return found }
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                buffer.append(contentsOf: chunk[..<count])
            }
        }

        private static let headerTerminator = Array("\r\n\r\n".utf8)
        private static let lineTerminator = Array("\r\n".utf8)

        // MARK: Answering

        /// Runs the route on this connection's thread (see ``ConnectionExecutor``) and returns its answer.
        private func respond(to request: Request) -> Response {
            guard let handler = server.handler(for: request) else {
                return .text("No route for \(request.method) \(request.path)", status: 404)
            }
            let result = ResultBox()
            let executor = ConnectionExecutor()
            Task(executorPreference: executor) {
                do {
                    result.value = try await handler(request)
                } catch {
                    result.value = .text("Route failed: \(error)", status: 500)
                }
                executor.finish()
            }
            executor.runUntilFinished()
            return result.value ?? .text("Route gave no answer", status: 500)
        }

        /// Sends an answer, acting out its delay and fault. Returns whether the connection can
        /// carry another request.
        private func serve(_ response: Response, to request: Request) -> Bool {
            if response.delay > .zero, !waitWatchingForHangUp(response.delay) {
                server.record(.clientClosedEarly(target: request.target))
                return false
            }
            if response.fault == .closeBeforeResponding { return false }
            let keepAlive = request.headers["Connection"]?.lowercased() != "close"
            var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            head += "Content-Length: \(response.body.count)\r\n"
            head += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
            let body = request.method == "HEAD" ? [] : [UInt8](response.body)
            var complete: Bool
            switch response.fault {
            case .drip(let bytes, let interval):
                complete = write(Array(head.utf8))
                var offset = 0
                while complete && offset < body.count {
                    let end = min(offset + max(bytes, 1), body.count)
                    complete = write(Array(body[offset..<end]))
                    offset = end
                    if complete && offset < body.count { complete = waitWatchingForHangUp(interval) }
                }
            case .closeMidBody(let afterBytes):
                _ = write(Array(head.utf8) + body.prefix(afterBytes))
                return false
            case .closeBeforeResponding, nil:
                complete = write(Array(head.utf8) + body)
            }
            server.record(complete ? .answered(target: request.target) : .clientClosedEarly(target: request.target))
            return complete && keepAlive
        }

        /// Writes all bytes; `false` when the client hung up.
        private func write(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }

        /// Waits for `duration`; returns `false` early when the client hangs up meanwhile.
        private func waitWatchingForHangUp(_ duration: Duration) -> Bool {
            let deadline = ContinuousClock.now + duration
            while ContinuousClock.now < deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                let milliseconds = Int32(
                    clamping: max(
                        1,
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
                var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, min(milliseconds, 50))
                if ready > 0 {
                    var byte: UInt8 = 0
                    let peeked = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                    if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR) { return false }
                    if peeked > 0 { return true }  // a pipelined request; it will be read next
                }
            }
            return true
        }

        private static func reason(_ status: Int) -> String {
            switch status {
            case 200: "OK"
            case 201: "Created"
            case 202: "Accepted"
            case 204: "No Content"
            case 206: "Partial Content"
            case 301: "Moved Permanently"
            case 302: "Found"
            case 303: "See Other"
            case 307: "Temporary Redirect"
            case 308: "Permanent Redirect"
            case 400: "Bad Request"
            case 401: "Unauthorized"
            case 403: "Forbidden"
            case 404: "Not Found"
            case 408: "Request Timeout"
            case 429: "Too Many Requests"
            case 500: "Internal Server Error"
            case 502: "Bad Gateway"
            case 503: "Service Unavailable"
            default: "Status"
            }
        }
    }

    /// Carries a route's answer from its task to the connection thread.
    ///
    /// `@unchecked Sendable`: written once by the route's task, read after the executor finished.
    private final class ResultBox: @unchecked Sendable {
        var value: Response?
    }
}
