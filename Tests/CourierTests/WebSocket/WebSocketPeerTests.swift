import Courier
import Foundation
import Testing

/// Courier's frames against an independent implementation: the `websockets` Python library, as
/// Debian packages it (`python3-websockets`, which `.ci/run` installs). Its frame codec reads what
/// Courier writes as a client, and writes what Courier reads as a client; its handshake
/// computes the accept values Courier expects. Skipped, and said so, when it is absent.
@Suite(.enabled(if: WebSocketPeer.available, "needs python3-websockets (.ci/run installs it)"))
struct WebSocketPeerTests {
    private static let python = WebSocketPeer.python

    /// A frame as the library describes it in JSON: opcode, final bit, payload size and SHA-256
    /// (so that a failure prints a line, not 400 KB of hex).
    private struct Described: Codable, Equatable {
        let op: UInt8
        let fin: Bool
        let size: Int
        let digest: String

        init(_ frame: WebSocketFrame) {
            op = frame.opcode.rawValue
            fin = frame.isFinal
            size = frame.payload.count
            digest = SHA256.hash(frame.payload).hexString
        }
    }

    /// A frame for the library to write: opcode, final bit, payload in hex.
    private struct Written: Codable {
        let op: UInt8
        let fin: Bool
        let hex: String

        init(_ frame: WebSocketFrame) {
            op = frame.opcode.rawValue
            fin = frame.isFinal
            hex = frame.payload.hexString
        }
    }

    /// Frames of every kind and length form: texts (one cut inside a character), binaries of 0
    /// to 200,000 bytes, control frames between fragments, a close with a code and reason.
    private static let frames: [WebSocketFrame] = {
        var generator = SystemRandomNumberGenerator()
        func bytes(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        let euro = Array("price: 5€".utf8)
        return [
            WebSocketFrame(.text, Data("Hello".utf8)),
            WebSocketFrame(.text, Data(euro[..<9]), isFinal: false),
            WebSocketFrame(.ping, Data("are you there".utf8)),
            WebSocketFrame(.continuation, Data(euro[9...])),
            WebSocketFrame(.binary, Data()),
            WebSocketFrame(.binary, bytes(125)),
            WebSocketFrame(.binary, bytes(126)),
            WebSocketFrame(.binary, bytes(65535)),
            WebSocketFrame(.binary, bytes(65536), isFinal: false),
            WebSocketFrame(.pong, bytes(125)),
            WebSocketFrame(.continuation, bytes(200_000)),
            WebSocketFrame(.close, WebSocketClose(code: .goingAway, reason: "server restarts ✓").payload),
        ]
    }()

    /// Reads frames from standard input with the library (masked or not, as told), and writes
    /// them to standard output as JSON; or, told "write", reads JSON and writes the frames
    /// unmasked, as a server would.
    private static let script = """
        import hashlib, json, sys
        from websockets.frames import Frame, Opcode
        from websockets.streams import StreamReader
        mode = sys.argv[1]
        if mode == "read":
            reader = StreamReader()
            reader.feed_data(sys.stdin.buffer.read())
            reader.feed_eof()
            out = []
            while reader.buffer:
                parser = Frame.parse(reader.read_exact, mask=True, max_size=None, extensions=None)
                try:
                    next(parser)
                except StopIteration as done:
                    frame = done.value
                    digest = hashlib.sha256(frame.data).hexdigest()
                    out.append({"op": frame.opcode.value, "fin": frame.fin, "size": len(frame.data), "digest": digest})
                    continue
                raise SystemExit("a frame was cut short")
            json.dump(out, sys.stdout)
        else:
            for item in json.load(sys.stdin):
                frame = Frame(Opcode(item["op"]), bytes.fromhex(item["hex"]), fin=item["fin"])
                sys.stdout.buffer.write(frame.serialize(mask=False))
        """

    @Test("frames Courier writes, each masked with a fresh key, read back in the library as they were sent")
    func libraryReadsCourier() async throws {
        var wire = Data()
        var keys = Set<UInt32>()
        for frame in Self.frames {
            let key = UInt32.random(in: .min ... .max)
            keys.insert(key)
            wire.append(frame.encoded(maskingKey: key))
        }
        let output = try await Subprocess.runOnItsOwnThread(Self.python, ["-c", Self.script, "read"], input: wire)
        let read = try JSONDecoder().decode([Described].self, from: output)
        #expect(read == Self.frames.map(Described.init))
        #expect(keys.count == Self.frames.count)
    }

    @Test("frames the library writes as a server read in Courier as it wrote them, and join into the same messages")
    func courierReadsLibrary() async throws {
        let input = try JSONEncoder().encode(Self.frames.map(Written.init))
        let wire = try await Subprocess.runOnItsOwnThread(Self.python, ["-c", Self.script, "write"], input: input)
        var reader = WebSocketFrameReader(expectsMasked: false, maximumPayload: 1 << 20)
        reader.append(wire)
        var frames: [WebSocketFrame] = []
        while let frame = try reader.next() { frames.append(frame) }
        #expect(frames.map(Described.init) == Self.frames.map(Described.init))
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
        let events = try frames.compactMap { try assembler.receive($0) }
        #expect(events.count == 10, "three fragments make no event of their own")
        #expect(events.first == .text("Hello"))
        #expect(events.contains(.text("price: 5€")))
        #expect(events.last == .close(WebSocketClose(code: .goingAway, reason: "server restarts ✓")))
    }

    @Test("the accept value for twenty fresh keys is the one the library computes")
    func acceptValues() async throws {
        let keys = (0..<20).map { _ in WebSocketHandshake().key }
        let script = """
            import sys
            from websockets.utils import accept_key
            print("\\n".join(accept_key(key) for key in sys.stdin.read().split()))
            """
        let output = try await Subprocess.runOnItsOwnThread(
            Self.python, ["-c", script], input: Data(keys.joined(separator: "\n").utf8))
        let expected = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(expected == keys.map(WebSocketHandshake.accept(for:)))
    }
}

/// The `websockets` library's interpreter, and whether it is there.
enum WebSocketPeer {
    /// Debian's interpreter, whose packages include `websockets` (another `python3` on the path
    /// may not see them).
    static let python = "/usr/bin/python3"

    static let available: Bool =
        (try? Subprocess.exitStatus(python, ["-c", "import websockets.frames, websockets.streams"])) == 0
}
