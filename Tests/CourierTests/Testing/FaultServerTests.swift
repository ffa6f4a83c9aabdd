import Courier
import CourierTesting
import Foundation
import Testing

/// The scripted fault server itself: it sends what the script says and records what arrives.
@Suite struct FaultServerTests {
    @Test("a script's bytes reach the client, and request heads and bytes are recorded")
    func scriptAndRecord() async throws {
        let server = try FaultServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"), .close])
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.write("POST /a?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        #expect(socket.read(until: "\r\n\r\nhi").hasSuffix("hi"))
        #expect(await server.waitUntil { $0.connections.first?.isClosed == true })
        let heads = server.requestHeads
        #expect(heads.map(\.method) == ["POST"])
        #expect(heads.first?.target == "/a?b=1")
        #expect(heads.first?.headers["Content-Length"] == "3")
        #expect(server.connections.first?.completeRequestCount == 1)
        #expect(server.connections.first?.received.suffix(3) == Data("abc".utf8))
    }

    @Test("sending nothing forever, or stopping mid-flood, ends the connection's thread")
    func emptyAndEndlessSends() async throws {
        for step in [FaultServer.Step.sendForever(Data()), .sendForever(Data(count: 1024))] {
            let server = try FaultServer([.readRequest, step])
            let socket = try RawSocket(port: server.port)
            socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await server.waitUntil { $0.requestHeads.count == 1 })
            server.stop()
            // The socket stays open on the client's side: only the server can end the thread.
            // (`waitUntil` ends with the server, so this polls.)
            let deadline = ContinuousClock.now + .seconds(5)
            while server.connections.first?.isClosed != true, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.connections.first?.isClosed == true, "\(step)")
            withExtendedLifetime(socket) {}
        }
    }

    @Test("each connection runs the script for its number")
    func scriptPerConnection() async throws {
        let server = try FaultServer { connection in
            [
                .readHead, .send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n\(connection)"),
                .close,
            ]
        }
        defer { server.stop() }
        for expected in 0..<3 {
            let socket = try RawSocket(port: server.port)
            socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(socket.read(until: "\r\n\r\n\(expected)").hasSuffix("\(expected)"))
        }
        #expect(await server.waitUntil { $0.connections.count == 3 && $0.requestHeads.count == 3 })
    }

    @Test("a reset reaches the client as a reset, and a hang-up is recorded as the client's")
    func resetAndHangUp() async throws {
        let server = try FaultServer { connection in connection == 0 ? [.readHead, .reset] : [] }
        defer { server.stop() }
        let reset = try RawSocket(port: server.port)
        reset.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(reset.readError() == ECONNRESET)

        do {
            let quiet = try RawSocket(port: server.port)
            #expect(await server.waitUntil { $0.connections.count == 2 })
            _ = quiet
        }
        #expect(await server.waitUntil { $0.connections.last?.closedByClient == true })
    }

    @Test("a trickle arrives in order and whole")
    func trickle() throws {
        let body = String(repeating: "x", count: 20)
        let server = try FaultServer([
            .readHead,
            .trickle(
                Data("HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n\(body)".utf8), bytesAtATime: 7,
                every: .milliseconds(5)),
        ])
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(socket.read(until: body).hasSuffix("\r\n\r\n" + body))
    }

    @Test("releasing the server stops it")
    func releaseStops() throws {
        var server: FaultServer? = try FaultServer([])
        let port = server!.port
        server = nil
        #expect(throws: POSIXError.self) { _ = try RawSocket(port: port) }
    }
}
