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

    /// Checks the server's answer to the handshake (section 4.1, the client's checks).
    /// - Parameters:
    ///   - status: The answer's status.
    ///   - headers: The answer's headers.
    /// - Returns: The subprotocol the server chose, if any.
    /// - Throws: ``NetworkError/Code/transport`` for an answer that does not complete the
    ///   handshake (a status other than `101`, a missing or wrong header, an extension or a
    ///   subprotocol that was not offered).
    package func check(status: Int, headers: HTTPHeaders) throws(NetworkError) -> String? {
        func fail(_ message: String) -> NetworkError {
            NetworkError(.transport, "The server did not accept the WebSocket: \(message).")
        }
        guard status == 101 else { throw fail("it answered \(status), not 101 Switching Protocols") }
        guard headers["Upgrade"]?.trimmingCharacters(in: .whitespaces).lowercased() == "websocket" else {
            throw fail("its Upgrade header is not websocket")
        }
        let connection = headers["Connection"]?.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard connection?.contains("upgrade") == true else { throw fail("its Connection header does not say Upgrade") }
        guard headers["Sec-WebSocket-Accept"]?.trimmingCharacters(in: .whitespaces) == Self.accept(for: key) else {
            throw fail("its Sec-WebSocket-Accept does not answer the key")
        }
        // No extension is offered (compression is not yet), so none may be in use.
        if let extensions = headers["Sec-WebSocket-Extensions"], !extensions.isEmpty {
            throw fail("it uses an extension that was not offered (\(extensions.prefix(64)))")
        }
        guard let chosen = headers["Sec-WebSocket-Protocol"]?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        guard subprotocols.contains(chosen) else {
            throw fail("it chose a subprotocol that was not offered (\(chosen.prefix(64)))")
        }
        return chosen
    }
}
