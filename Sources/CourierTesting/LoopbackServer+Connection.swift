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
        let core: Core
        private var parser = RequestParser(maximumHeadSize: 64 * 1024, maximumBodySize: 1 << 30)
        private var chunk = [UInt8](repeating: 0, count: 65_536)

        init(socket: Int32, core: Core) {
            self.socket = socket
            self.core = core
        }

        mutating func run() {
            while let request = readRequest() {
                core.record(.received(method: request.method, target: request.target), request: request)
                let response = respond(to: request)
                if let route = response.webSocket {
                    return serveWebSocket(route, response, to: request, unread: parser.takeUnread())
                }
                guard serve(response, to: request) else { return }
                let connection = request.headers["Connection"]?.lowercased()
                if connection == "close" { return }
            }
        }

        // MARK: Reading

        /// Reads one whole request, or `nil` when the client hung up; a malformed request is
        /// answered with its error status, and then the connection ends too.
        private mutating func readRequest() -> Request? {
            var head: RequestParser.Head?
            while true {
                while let event = parser.next() {
                    switch event {
                    case .head(let parsed):
                        head = parsed
                        if parsed.headers["Expect"]?.lowercased() == "100-continue" {
                            guard Sockets.write(socket, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return nil }
                        }
                    case .body(let body, let wasChunked):
                        guard let head else { return nil }
                        return Request(
                            method: HTTPMethod(head.method), target: head.target, headers: head.headers, body: body,
                            wasChunked: wasChunked)
                    case .malformed(let status, let reason):
                        core.record(.rejected(status: status))
                        let answer =
                            "HTTP/1.1 \(status) \(Self.reason(status))\r\nContent-Type: text/plain\r\n"
                            + "Content-Length: \(reason.utf8.count)\r\nConnection: close\r\n\r\n\(reason)"
                        _ = Sockets.write(socket, Array(answer.utf8))
                        return nil
                    }
                }
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                parser.feed(chunk[..<count])
            }
        }

        // MARK: Answering

        /// Runs the route and returns its answer: on this connection's thread (see
        /// ``ConnectionExecutor``) where task executors exist (iOS 18, macOS 15 and later,
        /// Linux), otherwise in a task of Swift's shared pool that this thread waits for.
        private func respond(to request: Request) -> Response {
            guard let handler = core.handler(for: request) else {
                return .text("No route for \(request.method) \(request.path)", status: 404)
            }
            let result = ResultBox()
            run {
                do {
                    result.value = try await handler(request)
                } catch {
                    result.value = .text("Route failed: \(error)", status: 500)
                }
            }
            return result.value ?? .text("Route gave no answer", status: 500)
        }

        /// Runs a route's work and waits for it: on this connection's thread (see
        /// ``ConnectionExecutor``) where task executors exist (iOS 18, macOS 15 and later,
        /// Linux), otherwise in a task of Swift's shared pool that this thread waits for.
        private func run(_ work: @escaping @Sendable () async -> Void) {
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), core.routesOnConnectionThreads {
                let executor = ConnectionExecutor()
                Task(executorPreference: executor) {
                    await work()
                    executor.finish()
                }
                executor.runUntilFinished()
            } else {
                let done = DispatchSemaphore(value: 0)
                Task {
                    await work()
                    done.signal()
                }
                done.wait()
            }
        }

        /// Sends a streamed answer: the head, then the chunks the route writes. The connection
        /// ends with it.
        private func serveStream(
            _ response: Response, _ body: @escaping @Sendable (StreamWriter) async -> Void, to request: Request
        ) -> Bool {
            var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            head += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            guard write(Array(head.utf8)) else {
                core.record(.clientClosedEarly(target: request.target))
                return false
            }
            let writer = StreamWriter(socket: socket)
            run { await body(writer) }
            let complete = !writer.isDropped && write(StreamWriter.lastChunk)
            core.record(complete ? .answered(target: request.target) : .clientClosedEarly(target: request.target))
            return false
        }

        /// Accepts a WebSocket handshake and hands the connection to the route's session; the
        /// connection ends with it. A request that does not ask for the upgrade is answered 400.
        private func serveWebSocket(
            _ route: WebSocketRoute, _ response: Response, to request: Request, unread: [UInt8]
        ) {
            guard request.headers["Upgrade"]?.lowercased() == "websocket",
                request.headers["Sec-WebSocket-Version"] == "13",
                let key = request.headers["Sec-WebSocket-Key"]
            else {
                let reason = "Not a WebSocket handshake."
                _ = write(
                    Array(
                        ("HTTP/1.1 400 Bad Request\r\nContent-Length: \(reason.utf8.count)\r\nConnection: close\r\n\r\n"
                            + reason).utf8))
                core.record(.answered(target: request.target))
                return
            }
            var head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            head += "Sec-WebSocket-Accept: \(WebSocketHandshake.accept(for: key))\r\n"
            if let subprotocol = route.subprotocol { head += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            guard write(Array((head + "\r\n").utf8)) else {
                core.record(.clientClosedEarly(target: request.target))
                return
            }
            core.record(.answered(target: request.target))
            let connection = WebSocketConnection(socket: socket, request: request, unread: unread)
            run { await route.session(connection) }
            connection.end()
        }

        /// Sends an answer, acting out its delay and fault. Returns whether the connection can
        /// carry another request.
        private func serve(_ response: Response, to request: Request) -> Bool {
            if response.delay > .zero, !waitWatchingForHangUp(response.delay) {
                core.record(.clientClosedEarly(target: request.target))
                return false
            }
            if response.fault == .closeBeforeResponding { return false }
            if let body = response.streamBody { return serveStream(response, body, to: request) }
            let keepAlive = request.headers["Connection"]?.lowercased() != "close"
            var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            head += "Content-Length: \(response.body.count)\r\n"
            head += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
            let body = request.method == .head ? [] : [UInt8](response.body)
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
                _ = write(Array(head.utf8) + body.prefix(max(afterBytes, 0)))
                return false
            case .closeBeforeResponding, nil:
                complete = write(Array(head.utf8) + body)
            }
            core.record(complete ? .answered(target: request.target) : .clientClosedEarly(target: request.target))
            return complete && keepAlive
        }

        /// Writes all bytes; `false` when the client hung up.
        private func write(_ bytes: [UInt8]) -> Bool { Sockets.write(socket, bytes) }

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
            case 413: "Content Too Large"
            case 431: "Request Header Fields Too Large"
            case 408: "Request Timeout"
            case 429: "Too Many Requests"
            case 500: "Internal Server Error"
            case 502: "Bad Gateway"
            case 501: "Not Implemented"
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
