import Courier
import Foundation
import Testing

/// Messages out of frames (RFC 6455, sections 5.4, 5.5 and 8.1): fragments joined, control
/// frames between them, text checked as UTF-8 fragment by fragment, close frames read.
@Suite struct WebSocketMessageTests {
    private func events(
        _ frames: [WebSocketFrame], limit: Int = 1 << 20
    ) throws(WebSocketProtocolError) -> [WebSocketMessageAssembler.Event] {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        var events: [WebSocketMessageAssembler.Event] = []
        for frame in frames {
            if let event = try assembler.receive(frame) { events.append(event) }
        }
        return events
    }

    private func failure(_ frames: [WebSocketFrame], limit: Int = 1 << 20) -> WebSocketProtocolError? {
        do throws(WebSocketProtocolError) {
            _ = try events(frames, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test("fragments join into one message, with a ping and a pong between them delivered as they come")
    func fragmentsAndControlFrames() throws {
        let read = try events([
            WebSocketFrame(.text, Data("fra".utf8), isFinal: false),
            WebSocketFrame(.ping, Data("p".utf8)),
            WebSocketFrame(.continuation, Data("gme".utf8), isFinal: false),
            WebSocketFrame(.pong, Data()),
            WebSocketFrame(.continuation, Data("nts".utf8)),
            WebSocketFrame(.binary, Data([0, 1, 2])),
            WebSocketFrame(.binary, Data(), isFinal: false),
            WebSocketFrame(.continuation, Data()),
        ])
        #expect(
            read == [
                .ping(Data("p".utf8)), .pong(Data()), .text("fragments"), .binary(Data([0, 1, 2])), .binary(Data()),
            ])
    }

    @Test("a character cut between two fragments is valid; a text that ends inside one is not")
    func utf8AcrossFragments() throws {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        #expect(
            try events([
                WebSocketFrame(.text, Data(euro[..<1]), isFinal: false),
                WebSocketFrame(.continuation, Data(euro[1...])),
            ]) == [.text("€")])
        #expect(failure([WebSocketFrame(.text, Data(euro[..<2]))])?.closeCode == .invalidData)
    }

    @Test("an invalid byte fails the message in the fragment it is in, before the message ends")
    func utf8FailsFast() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
        #expect(throws: Never.self) { try assembler.receive(WebSocketFrame(.text, Data("ok".utf8), isFinal: false)) }
        #expect(throws: WebSocketProtocolError(.invalidData, "a text message is not UTF-8")) {
            try assembler.receive(WebSocketFrame(.continuation, Data([0xC0, 0x80]), isFinal: false))
        }
    }

    @Test(
        "continuations out of order break the protocol",
        arguments: [
            [WebSocketFrame(.continuation, Data("x".utf8))],
            [WebSocketFrame(.text, Data("a".utf8), isFinal: false), WebSocketFrame(.text, Data("b".utf8))],
            [WebSocketFrame(.binary, Data([1]), isFinal: false), WebSocketFrame(.binary, Data([2]))],
        ])
    func outOfOrder(_ frames: [WebSocketFrame]) {
        #expect(failure(frames)?.closeCode == .protocolError)
    }

    @Test("a message's fragments are counted together against the limit")
    func limitAcrossFragments() {
        let piece = Data(count: 600)
        let frames = [
            WebSocketFrame(.binary, piece, isFinal: false), WebSocketFrame(.continuation, piece),
        ]
        #expect(failure(frames, limit: 1200) == nil)
        #expect(failure(frames, limit: 1199)?.closeCode == .messageTooBig)
    }

    @Test("a close frame reads as its code and reason, or as no status when empty")
    func closeFrames() throws {
        #expect(try events([WebSocketFrame(.close)]) == [.close(WebSocketClose(code: .noStatus))])
        let payload = WebSocketClose(code: .goingAway, reason: "bye ✓").payload
        #expect([UInt8](payload) == [0x03, 0xE9] + Array("bye ✓".utf8))
        #expect(
            try events([WebSocketFrame(.close, payload)]) == [.close(WebSocketClose(code: .goingAway, reason: "bye ✓"))]
        )
        #expect(
            try events([WebSocketFrame(.close, Data([0x0F, 0xA0]))]) == [
                .close(WebSocketClose(code: .init(rawValue: 4000)))
            ])
    }

    @Test(
        "a close frame with one byte, or a code that may not be sent, breaks the protocol",
        arguments: [
            [0x03], [0x00, 0x00], [0x03, 0xE7], [0x03, 0xEC], [0x03, 0xED], [0x03, 0xEE], [0x03, 0xF7], [0x03, 0xF8],
            [0x07, 0xD0], [0x0B, 0xB7], [0x13, 0x88],
        ]
            as [[UInt8]])
    func badCloseCodes(_ bytes: [UInt8]) {
        #expect(failure([WebSocketFrame(.close, Data(bytes))])?.closeCode == .protocolError)
    }

    @Test("a close frame's reason must be UTF-8")
    func closeReasonUTF8() {
        #expect(failure([WebSocketFrame(.close, Data([0x03, 0xE8, 0xFF]))])?.closeCode == .invalidData)
    }

    @Test("a reason too long for a control frame is cut at a character's end, within 123 bytes")
    func longReason() throws {
        let reason = String(repeating: "é", count: 100)  // 200 bytes
        let payload = WebSocketClose(code: .normal, reason: reason).payload
        #expect(payload.count == 2 + 122)
        #expect(try WebSocketClose(payload: payload).reason == String(repeating: "é", count: 61))
    }

    @Test(
        "every code a close frame may carry is read: the defined ones, the registered 1012 to 1014, and 3000 to 4999",
        arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
            as [UInt16])
    func allowedCloseCodes(_ code: UInt16) throws {
        let payload = Data([UInt8(code >> 8), UInt8(code & 0xFF)])
        #expect(try events([WebSocketFrame(.close, payload)]) == [.close(WebSocketClose(code: .init(rawValue: code)))])
    }

    @Test("a close that may not be sent with its code (no status, abnormal, 1015) is written without one")
    func unsendableCodes() {
        for code: UInt16 in [1004, 1005, 1006, 1015, 999, 5000] {
            #expect(WebSocketClose(code: .init(rawValue: code), reason: "x").payload.isEmpty, "\(code)")
        }
    }

    @Test("one frame past the limit fails, a text as a binary")
    func singleFrameLimit() {
        for opcode: WebSocketFrame.Opcode in [.text, .binary] {
            let frame = WebSocketFrame(opcode, Data(repeating: 0x61, count: 101))
            #expect(failure([frame], limit: 100)?.closeCode == .messageTooBig)
            #expect(failure([frame], limit: 101) == nil)
        }
    }

    @Test("a compressed message fails: nothing inflates it yet, and its bytes read as they are would be wrong")
    func compressedRefused() {
        #expect(failure([WebSocketFrame(.text, Data("x".utf8), isCompressed: true)])?.closeCode == .protocolError)
    }
}
