import Courier
import CourierTesting
import Foundation
import Testing

/// Bodies and header blocks have a bound, counted after decoding, so neither a server nor a
/// compression bomb can exhaust memory.
@Suite struct ResponseLimitTests {
    /// The same answer to every request on a connection (a few of them).
    static func answer(_ body: Data, headers: String = "") -> [FaultServer.Step] {
        let once: [FaultServer.Step] = [
            .readRequest, .send("HTTP/1.1 200 OK\r\n\(headers)Content-Length: \(body.count)\r\n\r\n"), .send(body),
        ]
        return Array(repeating: once, count: 4).flatMap { $0 }
    }

    @Test("a body over the endpoint's limit fails with responseTooLarge")
    func bodyOverEndpointLimit() async throws {
        let backend = try FaultBackend(Self.answer(Data(count: 5000)))
        defer { backend.server.stop() }
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data).maximumResponseBodySize(4096))
        }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("a chunked body over the client's limit fails with responseTooLarge")
    func chunkedBodyOverClientLimit() async throws {
        let chunk = "1000\r\n" + String(repeating: "a", count: 4096) + "\r\n"
        let backend = try FaultBackend(
            configure: { $0.maximumResponseBodySize = 10_000 },
            [
                .readRequest, .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                .send(Data(chunk.utf8), times: 3), .send("0\r\n\r\n"),
            ])
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data)) }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("a body within the limit arrives whole")
    func bodyWithinLimit() async throws {
        let body = Data(repeating: 7, count: 4096)
        let backend = try FaultBackend(Self.answer(body))
        defer { backend.server.stop() }
        let value = try await backend.client.send(
            Endpoint<Data>.get("x", decoding: .data).maximumResponseBodySize(4096))
        #expect(value == body)
    }

    @Test("the client's default limit is 64 MiB")
    func defaultLimit() {
        #expect(
            NetworkClient.Configuration(baseURL: URL(string: "http://127.0.0.1/")!).maximumResponseBodySize == 64 << 20)
    }

    @Test("an endless body into memory ends at the client's limit, not in exhausted memory")
    func endlessBody() async throws {
        // A small limit: under URLSession the flood goes on until FoundationNetworking's own
        // cancellation lands (from milliseconds to seconds), slowing other tests meanwhile.
        let backend = try FaultBackend(
            timeout: .seconds(30), configure: { $0.maximumResponseBodySize = 4 << 20 },
            [
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"),
                .sendForever(Data(count: 65_536)),
            ])
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data)) }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("a deadline holds while another answer floods the transport and other requests start")
    func deadlineHoldsDuringAFlood() async throws {
        // An endless body at full speed: it ends at its limit, but on Linux URLSession the
        // flood goes on until FoundationNetworking takes the cancel, keeping its process-wide
        // queue busy; making other requests' tasks waits for that queue. The client's own
        // timeout only ends a hang: long, so a timed request that ignored its 1 s deadline
        // would end far past the allowance below.
        let flood = try FaultBackend(
            timeout: .seconds(30) * TestTiming.scale,
            [
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"),
                .sendForever(Data(count: 65_536)),
            ])
        defer { flood.server.stop() }
        let silent = try FaultServer([.readRequest])
        defer { silent.stop() }
        let other = try LoopbackServer()
        defer { other.stop() }
        other.route("/y") { _ in .envelope(data: 1) }
        let client = flood.client
        func url(_ server: URL, _ path: String) -> String { server.appendingPathComponent(path).absoluteString }
        let flooded = Task {
            await networkError {
                let endpoint = Endpoint<Data>.get(url(flood.server.baseURL, "x"), decoding: .data)
                _ = try await client.send(endpoint.maximumResponseBodySize(4 << 20))
            }
        }
        // The flood is under way before the timed request starts.
        #expect(await flood.server.waitUntil(timeout: .seconds(30) * TestTiming.scale) { $0.requestHeads.count == 1 })
        let traffic = (0..<4).map { _ in
            Task {
                while !Task.isCancelled { _ = try? await client.send(Endpoint<Int>.get(url(other.baseURL, "y"))) }
            }
        }
        let started = ContinuousClock.now
        let error = await networkError {
            let endpoint = Endpoint<Data>.get(url(silent.baseURL, "z"), decoding: .data)
            _ = try await client.send(endpoint.timeout(.seconds(1)))
        }
        let elapsed = ContinuousClock.now - started
        for task in traffic {
            task.cancel()
            await task.value
        }
        let floodError = await flooded.value

        #expect(floodError?.code == .responseTooLarge, "\(String(describing: floodError))")
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        // The whole suite runs at once on two cores, and instrumented code slower still: a
        // margin for that, far short of the client's timeout.
        let allowance: Duration = (TestTransport.isURLSession ? .seconds(6) : .seconds(4)) * TestTiming.scale
        #expect(elapsed < .seconds(1) + allowance, "\(elapsed)")
    }

    @Test("an announced length over the limit fails before the body is read")
    func announcedLengthOverLimit() async throws {
        let backend = try FaultBackend([
            .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\nabc"),
        ])
        defer { backend.server.stop() }
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data).maximumResponseBodySize(1000))
        }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    static let bombs: [String] = ["gzip", "deflate"]

    @Test("a compression bomb is counted after decoding", arguments: bombs)
    func compressionBomb(encoding: String) async throws {
        let plain = Data(count: 8 << 20)
        let compressed = encoding == "gzip" ? try Compression.gzip(plain) : try Compression.deflate(plain)
        #expect(compressed.count < 64 << 10)
        let backend = try FaultBackend(Self.answer(compressed, headers: "Content-Encoding: \(encoding)\r\n"))
        defer { backend.server.stop() }
        let endpoint = Endpoint<Data>.get("x", decoding: .data)

        let error = await networkError { _ = try await backend.client.send(endpoint.maximumResponseBodySize(1 << 20)) }
        let whole = try await backend.client.send(endpoint.maximumResponseBodySize(8 << 20))

        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
        #expect(whole == plain)
    }

    @Test("a header block over 256 KiB fails with responseTooLarge")
    func headerBlockBound() async throws {
        let line = Data("X-Filler: \(String(repeating: "h", count: 1000))\r\n".utf8)
        let backend = try FaultBackend { _ in
            [.readRequest, .send("HTTP/1.1 200 OK\r\n"), .send(line, times: 300), .send("Content-Length: 0\r\n\r\n")]
        }
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data)) }
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("endless headers end with responseTooLarge (or, where libcurl has no cap, the deadline)")
    func endlessHeaders() async throws {
        let line = Data("X-Filler: \(String(repeating: "h", count: 1000))\r\n".utf8)
        let backend = try FaultBackend([.readRequest, .send("HTTP/1.1 200 OK\r\n"), .sendForever(line)])
        defer { backend.server.stop() }
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<Data>.get("x", decoding: .data).timeout(.seconds(2)))
        }
        // Under URLSession the head is libcurl's to bound (300 KB in Debian's build, none before
        // curl 8.3); FoundationNetworking keeps every line until then, and the deadline holds.
        let expected: Set<NetworkError.Code> =
            TestTransport.isURLSession ? [.responseTooLarge, .timedOut] : [.responseTooLarge]
        #expect(error.map { expected.contains($0.code) } == true, "\(String(describing: error))")
    }
}
