import Courier
import CourierTesting
import Foundation
import Testing

/// The test server itself: HTTP/1.1 framing, keep-alive, recording and concurrency.
@Suite struct LoopbackServerTests {
    @Test("sequential requests from one client share a kept-alive connection")
    func keepAlive() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order]()) }
        for page in 1...5 { _ = try await backend.client.send(.orders(page: page)) }
        #expect(backend.server.requests.count == 5)
        #expect(backend.server.events.filter { $0 == .connected }.count == 1)
    }

    @Test("with recording off the server answers as before and keeps no requests or events, until it is on again")
    func recordingOff() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order]()) }
        backend.server.isRecording = false
        for page in 1...3 { _ = try await backend.client.send(.orders(page: page)) }
        #expect(backend.server.requests.isEmpty && backend.server.events.isEmpty)
        backend.server.isRecording = true
        _ = try await backend.client.send(.orders(page: 4))
        #expect(backend.server.requests.map(\.query["page"]) == ["4"])
        #expect(backend.server.isRecording)
    }

    @Test("a chunked request body is de-chunked, and pipelined requests on one socket are answered in order")
    func chunkedBody() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/echo") { request in .text(String(decoding: request.body, as: UTF8.self)) }
        let socket = try RawSocket(port: server.port)
        socket.write(
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        let answer = socket.read(until: "\r\n\r\nabc")
        #expect(answer.contains("Content-Length: 12\r\n"))
        #expect(answer.contains("\r\n\r\nhello, world"))
        #expect(answer.hasSuffix("\r\n\r\nabc"))
        #expect(server.requests.map(\.wasChunked) == [true, false])
    }

    @Test("Expect: 100-continue is answered before the body is read")
    func expectContinue() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/upload") { request in .text("\(request.body.count)") }
        let socket = try RawSocket(port: server.port)
        socket.write("PUT /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        #expect(socket.read(until: "100 Continue\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue"))
        socket.write("data")
        #expect(socket.read(until: "\r\n\r\n4").hasSuffix("4"))
    }

    @Test("an unknown route is a 404 and a throwing route a 500")
    func fallbacks() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        struct Boom: Error {}
        backend.server.route("/v1/boom") { _ in throw Boom() }
        let missing = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("nowhere")) }
        let failed = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("boom")) }
        #expect(missing?.status == 404)
        #expect(failed?.status == 500)
    }

    @Test("64 slow requests on 64 connections are served concurrently")
    func concurrentConnections() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/slow") { _ in LoopbackServer.Response.text("ok").delayed(by: .milliseconds(500)) }
        // Blocking sockets need their own threads: on the cooperative pool they would starve the routes.
        let answers = Log()
        let group = DispatchGroup()
        let start = ContinuousClock.now
        for _ in 0..<64 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let socket = try? RawSocket(port: server.port) else { return answers.append("connect failed") }
                socket.write("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let answer = socket.read(until: "\r\n\r\nok")
                answers.append(answer.hasSuffix("ok") ? "ok" : "bad answer: \(answer)")
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(answers.all == Array(repeating: "ok", count: 64), "received: \(server.requests.count)")
        // Served one after another this would take 64 × 0.5 s = 32 s.
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(server.events.filter { $0 == .connected }.count == 64)
    }

    @Test("a wait predicate may read the server's own records")
    func predicateReadsRecords() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order]()) }
        let server = backend.server
        async let seen = server.waitForEvents(timeout: .seconds(10)) { _ in server.requests.count == 2 }
        for page in 1...2 { _ = try await backend.client.send(.orders(page: page)) }
        #expect(await seen)
    }

    @Test("stop ends waiting and refuses new connections")
    func stop() async throws {
        let server = try LoopbackServer()
        let port = server.port
        server.stop()
        #expect(await server.waitForEvents(timeout: .seconds(10)) { _ in false } == false)
        #expect(throws: (any Error).self) { try RawSocket(port: port) }
    }
}
