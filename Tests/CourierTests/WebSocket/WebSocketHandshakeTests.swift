import Courier
import Foundation
import Testing

/// The opening handshake, the client's side (RFC 6455, section 4).
@Suite struct WebSocketHandshakeTests {
    private let rfcKey = "dGhlIHNhbXBsZSBub25jZQ=="

    private func answer(_ fields: [(String, String)], status: Int = 101) -> (Int, HTTPHeaders) {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.append(name: name, value: value) }
        return (status, headers)
    }

    private var accepted: [(String, String)] {
        [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        ]
    }

    @Test("the RFC's example key is answered with the RFC's accept value")
    func rfcAccept() {
        #expect(WebSocketHandshake.accept(for: rfcKey) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("each handshake has a fresh key of 16 random bytes, and asks for version 13")
    func freshKeys() throws {
        let keys = Set((0..<50).map { _ in WebSocketHandshake().key })
        #expect(keys.count == 50)
        for key in keys { #expect(Data(base64Encoded: key)?.count == 16) }
        let headers = WebSocketHandshake(subprotocols: ["chat", "superchat"]).headers
        #expect(headers.contains { $0 == ("Sec-WebSocket-Version", "13") })
        #expect(headers.contains { $0 == ("Sec-WebSocket-Protocol", "chat, superchat") })
        #expect(!WebSocketHandshake().headers.contains { $0.name == "Sec-WebSocket-Protocol" })
    }

    @Test("a 101 with the upgrade headers (in any case, Connection among other tokens) and the right accept completes")
    func accepts() throws {
        let handshake = WebSocketHandshake(key: rfcKey, subprotocols: ["chat"])
        let (status, headers) = answer([
            ("upgrade", "WebSocket"), ("connection", "keep-alive, upgrade"),
            ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), ("Sec-WebSocket-Protocol", "chat"),
        ])
        #expect(try handshake.check(status: status, headers: headers) == "chat")
        let (plainStatus, plain) = answer(accepted)
        #expect(try WebSocketHandshake(key: rfcKey, subprotocols: []).check(status: plainStatus, headers: plain) == nil)
    }

    @Test(
        "an answer that does not complete the handshake fails with a transport error saying why",
        arguments: [
            ("200", 200, [], "not 101"),
            ("no Upgrade", 101, ["Upgrade"], "Upgrade header"),
            ("no Connection", 101, ["Connection"], "Connection header"),
            ("no accept", 101, ["Sec-WebSocket-Accept"], "Sec-WebSocket-Accept"),
        ] as [(String, Int, [String], String)])
    func refuses(_ name: String, _ status: Int, _ removed: [String], _ said: String) {
        let (_, headers) = answer(accepted.filter { !removed.contains($0.0) })
        let handshake = WebSocketHandshake(key: rfcKey, subprotocols: [])
        #expect {
            try handshake.check(status: status, headers: headers)
        } throws: { error in
            (error as? NetworkError)?.code == .transport && (error as? NetworkError)?.message.contains(said) == true
        }
    }

    @Test("a wrong accept, an extension or a subprotocol that was not offered fails")
    func refusesWhatWasNotOffered() {
        let handshake = WebSocketHandshake(key: rfcKey, subprotocols: ["chat"])
        for extra in [
            [("Sec-WebSocket-Accept", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=")],
            [("Sec-WebSocket-Extensions", "permessage-deflate")],
            [("Sec-WebSocket-Protocol", "other")],
        ] {
            let fields = accepted.filter { field in !extra.contains { $0.0 == field.0 } } + extra
            let (status, headers) = answer(fields)
            #expect(throws: NetworkError.self, "\(extra)") { try handshake.check(status: status, headers: headers) }
        }
    }

    @Test(
        "a wrong Upgrade or Connection value fails; a header given as several field lines is read whole",
        arguments: [
            ([("Upgrade", "h2c")], false),
            ([("Upgrade", "websocket, h2c")], false),
            ([("Connection", "keep-alive")], false),
            ([("Connection", "upgrades")], false),
            ([("Connection", "keep-alive"), ("Connection", "Upgrade")], true),
            ([("Sec-WebSocket-Extensions", ""), ("Sec-WebSocket-Extensions", "permessage-deflate")], false),
            ([("Sec-WebSocket-Protocol", "chat"), ("Sec-WebSocket-Protocol", "chat")], false),
            ([("Sec-WebSocket-Protocol", "chat, chat")], false),
            ([("Sec-WebSocket-Protocol", "chat")], true),
        ] as [([(String, String)], Bool)])
    func fieldLines(_ replaced: [(String, String)], _ isAccepted: Bool) {
        let names = Set(replaced.map(\.0))
        let (status, headers) = answer(accepted.filter { !names.contains($0.0) } + replaced)
        let handshake = WebSocketHandshake(key: rfcKey, subprotocols: ["chat"])
        if isAccepted {
            #expect(throws: Never.self) { try handshake.check(status: status, headers: headers) }
        } else {
            #expect(throws: NetworkError.self, "\(replaced)") { try handshake.check(status: status, headers: headers) }
        }
    }

    @Test("a subprotocol chosen when none was offered fails")
    func subprotocolNotOffered() {
        let (status, headers) = answer(accepted + [("Sec-WebSocket-Protocol", "chat")])
        #expect(throws: NetworkError.self) {
            try WebSocketHandshake(key: rfcKey, subprotocols: []).check(status: status, headers: headers)
        }
    }
}
