import Foundation

/// The step under the client's layers that opens a WebSocket: it adds the upgrade's headers to
/// the request the layers built, makes the handshake, and hands the layers the server's answer.
/// A `101` answer's connection is kept aside for ``NetworkClient/webSocket(_:options:)``; any
/// other answer goes up to the layers as an ordinary one (a refused token, a business code
/// asking for a login), which may make the handshake again: each attempt drops the connection
/// of the one before.
///
/// `@unchecked Sendable`: `opened` is guarded by `lock`.
package final class WebSocketUpgrade: Transport, @unchecked Sendable {
    /// A connection the server switched, with the answer that switched it.
    struct Opened {
        let link: any WebSocketLink
        let subprotocol: String?
        let response: HTTPResponse
    }

    /// The field that offers subprotocols, and names the one chosen.
    static let protocolField = "Sec-WebSocket-Protocol"

    private let options: WebSocketOptions
    private let tls: TLSOptions
    private let maximumBodySize: Int
    private let lock = NSLock()
    private var opened: Opened?

    init(options: WebSocketOptions, tls: TLSOptions, maximumBodySize: Int) {
        self.options = options
        self.tls = tls
        self.maximumBodySize = maximumBodySize
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        discard()
        // The layers' fields are checked as any request's; the upgrade's own are this step's.
        try request.checkWireSafety()
        var request = request
        let offered = try Self.subprotocols(request.headers[Self.protocolField])
        let handshake = WebSocketHandshake(subprotocols: offered)
        for field in handshake.headers { request.headers[field.name] = field.value }
        let (response, link) = try await Self.open(
            request, handshake: handshake, options: options, tls: tls, maximumBodySize: maximumBodySize)
        if let link {
            let previous = lock.withLock {
                defer { opened = Opened(link: link.link, subprotocol: link.subprotocol, response: response) }
                return opened
            }
            previous?.link.abort(Self.superseded, code: .goingAway)
        }
        return response
    }

    private static let superseded = NetworkError(.cancelled, "The WebSocket's handshake was made again.")

    /// The connection `response` switched, taken out of this step's hands.
    func take(answering response: HTTPResponse) -> Opened? {
        lock.withLock {
            // Each attempt drops the connection of the one before: one that is here is the last's.
            guard let opened, response.status == 101 else { return nil }
            self.opened = nil
            return opened
        }
    }

    /// Drops a connection an attempt opened that the layers did not take.
    func discard() {
        lock.withLock {
            defer { opened = nil }
            return opened
        }?.link.abort(Self.superseded, code: .goingAway)
    }

    /// The subprotocols a `Sec-WebSocket-Protocol` field offers, each checked to be a token.
    package static func subprotocols(_ field: String?) throws(NetworkError) -> [String] {
        guard let field else { return [] }
        let names = field.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let tokenBytes = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for name in names where name.isEmpty || !name.utf8.allSatisfy(tokenBytes.contains) {
            throw NetworkError(.invalidRequest, "The subprotocol \"\(name.prefix(64))\" is not a token.")
        }
        guard Set(names).count == names.count else {
            throw NetworkError(.invalidRequest, "A subprotocol is offered twice.")
        }
        return names
    }

    /// Makes the handshake on the platform's connection.
    private static func open(
        _ request: HTTPRequest, handshake: WebSocketHandshake, options: WebSocketOptions, tls: TLSOptions,
        maximumBodySize: Int
    ) async throws(NetworkError) -> (HTTPResponse, (link: any WebSocketLink, subprotocol: String?)?) {
        #if os(Linux)
            try await CurlWebSocketOpening.link(
                request, handshake: handshake, options: options, tls: tls, maximumBodySize: maximumBodySize)
        #else
            try await URLSessionWebSocketLink.open(request, options: options, tls: tls)
        #endif
    }
}
