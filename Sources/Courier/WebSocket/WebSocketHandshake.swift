import Foundation

/// The client's side of the opening handshake (RFC 6455, section 4): the headers that ask for
/// the upgrade, and the checks on the server's `101` answer.
package struct WebSocketHandshake: Sendable {
    /// The `Sec-WebSocket-Key`: 16 random bytes, base64.
    package let key: String
    /// The subprotocols offered, in order of preference (`Sec-WebSocket-Protocol`).
    package let subprotocols: [String]

    /// A handshake with a fresh key.
    /// - Parameter subprotocols: The subprotocols to offer, if any.
    package init(subprotocols: [String] = []) {
        self.init(key: Data(SystemCrypto.randomBytes(16)).base64EncodedString(), subprotocols: subprotocols)
    }

    /// A handshake with the given key (for tests: the RFC's example).
    package init(key: String, subprotocols: [String]) {
        self.key = key
        self.subprotocols = subprotocols
    }

    /// The GUID every server appends to the key before hashing it (section 1.3).
    private static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: base64 of the SHA-1 of the
    /// key and the GUID.
    package static func accept(for key: String) -> String {
        Data(SHA1.hash(Data((key + guid).utf8))).base64EncodedString()
    }

    /// The headers a GET must carry to ask for the upgrade.
    package var headers: [(name: String, value: String)] {
        var headers = [
            (name: "Upgrade", value: "websocket"), (name: "Connection", value: "Upgrade"),
            (name: "Sec-WebSocket-Key", value: key), (name: "Sec-WebSocket-Version", value: "13"),
        ]
        if !subprotocols.isEmpty {
            headers.append((name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", ")))
        }
        return headers
    }

    /// Checks the server's answer to the handshake (section 4.1, the client's checks). A header
    /// may come as several field lines: each is read.
    /// - Parameters:
    ///   - status: The answer's status.
    ///   - headers: The answer's headers.
    /// - Returns: The subprotocol the server chose, if any.
    /// - Throws: ``NetworkError/Code/transport`` for an answer that does not complete the
    ///   handshake (a status other than `101`, a missing or wrong header, an extension or a
    ///   subprotocol that was not offered, a subprotocol header given twice).
    package func check(status: Int, headers: HTTPHeaders) throws(NetworkError) -> String? {
        func fail(_ message: String) -> NetworkError {
            NetworkError(.transport, "The server did not accept the WebSocket: \(message).")
        }
        /// Every comma-separated token of every field line with this name, trimmed.
        func tokens(_ name: String) -> [String] {
            headers.filter { $0.name.lowercasedASCII == name.lowercasedASCII }
                .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        guard status == 101 else { throw fail("it answered \(status), not 101 Switching Protocols") }
        guard tokens("Upgrade").map(\.lowercasedASCII) == ["websocket"] else {
            throw fail("its Upgrade header is not websocket")
        }
        guard tokens("Connection").contains(where: { $0.lowercasedASCII == "upgrade" }) else {
            throw fail("its Connection header does not say Upgrade")
        }
        guard tokens("Sec-WebSocket-Accept") == [Self.accept(for: key)] else {
            throw fail("its Sec-WebSocket-Accept does not answer the key")
        }
        // No extension is offered (compression is not yet), so none may be in use.
        if let used = tokens("Sec-WebSocket-Extensions").first(where: { !$0.isEmpty }) {
            throw fail("it uses an extension that was not offered (\(used.prefix(64)))")
        }
        let chosen = tokens("Sec-WebSocket-Protocol")
        guard let protocolName = chosen.first else { return nil }
        guard chosen.count == 1, subprotocols.contains(protocolName) else {
            throw fail("it chose a subprotocol that was not offered (\(chosen.joined(separator: ", ").prefix(64)))")
        }
        return protocolName
    }
}

extension String {
    /// The string with only the ASCII letters lowercased: header names and tokens compare
    /// without Unicode's case rules (under which the Kelvin sign lowercases to "k").
    fileprivate var lowercasedASCII: String {
        String(
            decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 },
            as: UTF8.self)
    }
}
