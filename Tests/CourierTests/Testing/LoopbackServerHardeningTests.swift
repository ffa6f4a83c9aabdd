import Courier
import Foundation
import Testing

@testable import CourierTesting

#if canImport(Glibc)
    import Glibc
#endif

/// LoopbackServer runs inside users' test processes: hostile bytes must get an error answer,
/// never take the process down, and the server must keep serving.
@Suite struct LoopbackServerHardeningTests {
    static let hostileRequests: [(String, String)] = [
        ("negative length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
        ("overflowing length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        ("two lengths", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
        (
            "overflowing chunk size",
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc\r\n"
        ),
        (
            "huge chunk size",
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n"
        ),
        (
            "length and chunked",
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        ),
        ("no request line", "\r\n\r\n"),
        ("garbage", "\u{01}\u{02} nonsense\r\n\r\n"),
        ("a header without colon", "GET / HTTP/1.1\r\nHost x\r\n\r\n"),
    ]

    @Test("a hostile request gets an error status and the server keeps serving", arguments: hostileRequests)
    func hostileRequest(name: String, bytes: String) throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/echo") { request in .text("\(request.body.count)") }
        let socket = try RawSocket(port: server.port)
        socket.write(bytes)
        let answer = socket.read(until: "\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 4") || answer.hasPrefix("HTTP/1.1 5"), "\(name): \(answer)")
        #expect(server.events.contains { if case .rejected = $0 { true } else { false } })

        let next = try RawSocket(port: server.port)
        next.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
        #expect(next.read(until: "\r\n\r\n2").hasSuffix("\r\n\r\n2"))
    }

    @Test("a head over 64 KB is answered 431")
    func oversizedHead() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.write("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n")
        #expect(socket.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 431"))
    }

    @Test("releasing the server stops it: its port refuses connections")
    func releaseStops() throws {
        var server: LoopbackServer? = try LoopbackServer()
        let port = server!.port
        _ = try RawSocket(port: port)
        server = nil
        #expect(throws: POSIXError.self) { _ = try RawSocket(port: port) }
    }

    @Test("the parser frames pipelined, chunked and split requests byte by byte")
    func parserByteByByte() {
        let text =
            "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
            + "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nhi\r\n0\r\nT: 1\r\n\r\n"
            + "GET /c HTTP/1.1\r\n\r\n"
        var parser = RequestParser()
        var events: [RequestParser.Event] = []
        for byte in Array(text.utf8) {
            parser.feed([byte])
            while let event = parser.next() { events.append(event) }
        }
        let targets = events.compactMap { if case .head(let head) = $0 { head.target } else { nil } }
        let bodies = events.compactMap { if case .body(let body, let chunked) = $0 { (body, chunked) } else { nil } }
        #expect(targets == ["/a", "/b", "/c"])
        #expect(bodies.map(\.0) == [Data("abc".utf8), Data("hi".utf8), Data()])
        #expect(bodies.map(\.1) == [false, true, false])
    }

    @Test("a 16-digit chunk size is refused before any arithmetic on it")
    func chunkSizeBound() {
        #expect(RequestParser.chunkSize(Array("fffffffffffffff".utf8)) == 0xfff_ffff_ffff_ffff)
        #expect(RequestParser.chunkSize(Array("7fffffffffffffff".utf8)) == nil)
        #expect(RequestParser.chunkSize(Array("-1".utf8)) == nil)
        #expect(RequestParser.chunkSize(Array("".utf8)) == nil)
    }
}
