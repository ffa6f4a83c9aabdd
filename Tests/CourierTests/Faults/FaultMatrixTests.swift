import Courier
import CourierTesting
import Foundation
import Testing

/// The fault matrix: one broken or hostile server behaviour per row, run on the transport under
/// test (CI runs the suite on both). A row that must time out has a 2 s deadline (5 s on
/// URLSession, see ``deadline``); every other row a long one (``patience``), so a loaded machine
/// cannot turn its outcome into a timeout. Each row states the exact outcome; every row also
/// checks that the call ends well within its deadline and that no connection to the server is
/// left open once it failed. Rows of other suites: limits and bombs (`ResponseLimitTests`),
/// redirects (`RedirectTests`), duplicate POSTs (`NoDuplicatePostTests`), resume
/// (`ResumeHardeningTests`), CR/LF (`HeaderInjectionTests`), sessions (`SessionRaceTests`), and
/// answers that end the process inside Linux URLSession (`FoundationNetworkingTrapTests`).
@Suite struct FaultMatrixTests {
    /// What a row must end in.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Success with this body.
        case body(String)
        /// A ``NetworkError`` with this code (and, for `httpStatus`, this status).
        case error(NetworkError.Code, status: Int? = nil)

        var description: String {
            switch self {
            case .body(let text): "body \(text.debugDescription)"
            case .error(let code, let status): "\(code)" + (status.map { " \($0)" } ?? "")
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let script: [FaultServer.Step]
        let outcome: Outcome
        /// A different outcome on Linux `URLSession`, where FoundationNetworking decides.
        var onURLSession: Outcome?
        /// Whether Linux `URLSession` can end the process on this row (its own fault, out of
        /// Courier's reach), so the row runs on CurlTransport only.
        var trapsOnURLSession = false
        var testDescription: String { name }
    }

    static let json = "Content-Type: text/plain\r\n"
    static func answer(_ head: String, _ body: String = "") -> FaultServer.Step { .send(head + "\r\n" + body) }

    static let rows: [Row] = [
        Row(
            name: "Content-Length larger than the body, then close",
            script: [.readRequest, answer("HTTP/1.1 200 OK\r\n\(json)Content-Length: 100\r\n", "short"), .close],
            outcome: .error(.transport)),
        Row(
            name: "two different Content-Length headers",
            script: [
                .readRequest, answer("HTTP/1.1 200 OK\r\n\(json)Content-Length: 5\r\nContent-Length: 3\r\n", "hello"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "Content-Length with Transfer-Encoding: chunked",
            script: [
                .readRequest,
                answer(
                    "HTTP/1.1 200 OK\r\n\(json)Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                    "5\r\nhello\r\n0\r\n\r\n"),
                .close,
            ],
            // RFC 9112 6.3: Transfer-Encoding overrides Content-Length.
            outcome: .body("hello")),
        Row(
            name: "an invalid chunk size",
            script: [
                .readRequest, answer("HTTP/1.1 200 OK\r\n\(json)Transfer-Encoding: chunked\r\n", "zz\r\nhello\r\n"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "an overflowing chunk size",
            script: [
                .readRequest,
                answer("HTTP/1.1 200 OK\r\n\(json)Transfer-Encoding: chunked\r\n", "fffffffffffffffffff\r\nhello\r\n"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "a chunk size of 2^63-1, then close",
            script: [
                .readRequest,
                answer("HTTP/1.1 200 OK\r\n\(json)Transfer-Encoding: chunked\r\n", "7fffffffffffffff\r\nhello"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "the last chunk missing, then close",
            script: [
                .readRequest, answer("HTTP/1.1 200 OK\r\n\(json)Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "a garbage status line",
            script: [.readRequest, answer("HTTP/1.1 two hundred OK\r\n\(json)Content-Length: 2\r\n", "hi"), .close],
            outcome: .error(.transport)),
        Row(
            name: "status 999",
            script: [.readRequest, answer("HTTP/1.1 999 Odd\r\n\(json)Content-Length: 2\r\n", "hi"), .close],
            outcome: .error(.httpStatus, status: 999)),
        Row(
            name: "no status line",
            script: [.readRequest, answer("\(json)Content-Length: 2\r\n", "hi"), .close],
            outcome: .error(.transport)),
        Row(
            name: "a 200 KB header line",
            script: [
                .readRequest,
                answer(
                    "HTTP/1.1 200 OK\r\n\(json)X-Long: \(String(repeating: "a", count: 200_000))\r\nContent-Length: 2\r\n",
                    "hi"),
                .close,
            ],
            outcome: .error(.responseTooLarge)),
        Row(
            name: "10,000 header lines within the header bound",
            script: [
                .readRequest, .send("HTTP/1.1 200 OK\r\n\(json)Content-Length: 2\r\n"),
                .send(Data("X-A: b\r\n".utf8), times: 10_000),
                .send("\r\nhi"), .close,
            ],
            outcome: .body("hi")),
        Row(
            name: "an invalid gzip body",
            script: [
                .readRequest,
                answer("HTTP/1.1 200 OK\r\n\(json)Content-Encoding: gzip\r\nContent-Length: 10\r\n", "not gzip!!"),
                .close,
            ],
            outcome: .error(.transport)),
        Row(
            name: "a reset in the middle of the headers",
            script: [.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Ty"), .pause(.milliseconds(50)), .reset],
            outcome: .error(.transport)),
        Row(
            name: "a reset in the middle of the body",
            script: [
                .readRequest, answer("HTTP/1.1 200 OK\r\n\(json)Content-Length: 10\r\n", "hello"),
                .pause(.milliseconds(50)),
                .reset,
            ],
            outcome: .error(.transport)),
        Row(
            name: "1,000 interim 100 Continue answers before the answer",
            script: [
                .readRequest, .send(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8), times: 1000),
                answer("HTTP/1.1 200 OK\r\n\(json)Content-Length: 2\r\n", "hi"), .close,
            ],
            outcome: .body("hi")),
        Row(
            name: "header bytes that are not UTF-8",
            script: [
                .readRequest, .send(Data("HTTP/1.1 200 OK\r\n\(json)X-Bytes: ".utf8) + Data([0xFF, 0xFE, 0x80])),
                answer("\r\nContent-Length: 2\r\n", "hi"), .close,
            ],
            outcome: .body("hi"),
            // FoundationNetworking's header callback takes UTF-8 only.
            onURLSession: .error(.transport)),
        Row(
            // 64 KB is enough to show the bytes are refused; more floods FoundationNetworking's
            // one queue and holds back the rows running beside it.
            name: "a 101 answer nobody asked for, then 64 KB",
            script: [
                .readRequest, .send("HTTP/1.1 101 Switching Protocols\r\n\r\n"), .send(Data(count: 65_536)), .close,
            ],
            outcome: .error(.transport),
            onURLSession: .error(.httpStatus, status: 101)),
        Row(
            name: "a status line with a tab, then a body",
            script: [.readRequest, answer("HTTP/1.1 200\tOK\r\n\(json)Content-Length: 2\r\n", "hi"), .close],
            outcome: .error(.transport)),
        Row(
            name: "a slowloris answer: one byte every 100 ms, never ending",
            script: [
                .readRequest,
                .trickle(
                    Data("HTTP/1.1 200 OK\r\n\(json)X-Slow: \(String(repeating: "s", count: 10_000))".utf8),
                    bytesAtATime: 1,
                    every: .milliseconds(100)),
            ],
            outcome: .error(.timedOut),
            // Cancelled at its deadline with the header half received, FoundationNetworking
            // sometimes stops the process: "Transfer completed, but there's no response"
            // (NativeProtocol.swift). Seen in 2 of 5 runs of the previous release's code too.
            trapsOnURLSession: true),
    ]

    /// Linux URLSession serves every session of the process on one queue, which the
    /// 10,000-header row alone holds for about 1.5 s while the other rows wait to start: there
    /// 2 s left the rows beside it a few hundred milliseconds, and some ran out.
    static let deadline = TestTransport.isURLSession ? Duration.seconds(5) : .seconds(2)

    /// The deadline of a row that is not about one: it only ends a hang, which the row's
    /// outcome then shows as `timedOut`.
    static let patience = Duration.seconds(30) * TestTiming.scale

    @Test(
        "a broken server ends in its exact outcome, in time, with no failed connection left",
        arguments: rows.filter { !(TestTransport.isURLSession && $0.trapsOnURLSession) })
    func row(_ row: Row) async throws {
        let server = try FaultServer(row.script)
        defer { server.stop() }
        let expected = TestTransport.isURLSession ? row.onURLSession ?? row.outcome : row.outcome
        // Only a row that must time out is about its deadline.
        let timeout = expected == .error(.timedOut) ? Self.deadline : Self.patience
        let client = NetworkClient(
            configuration: .init(baseURL: server.baseURL, timeout: timeout, transport: TestTransport.make()))
        let started = ContinuousClock.now
        let outcome: Outcome
        var detail = ""
        do {
            let response = try await client.send(Endpoint<HTTPResponse>(method: .get, path: "x", decoding: .response))
            outcome = .body(String(decoding: response.body, as: UTF8.self))
        } catch {
            outcome = .error(error.code, status: error.code == .httpStatus ? error.status : nil)
            detail = error.description
        }
        let elapsed = ContinuousClock.now - started
        print("MATRIX \(TestTransport.name) | \(row.name) | \(outcome) | \(elapsed) | \(detail)")

        #expect(outcome == expected)
        // The whole suite runs at once on two cores (the storm suites among it), so even a row
        // answered at once can end seconds after its start (up to 6.5 s with the WebSocket
        // suites left out, on 2026-12-06); a hang would never end. Linux URLSession also makes
        // and cancels tasks by waiting on FoundationNetworking's process-wide queue, from
        // Swift's own threads, so an answer can land later still there (late, never lost).
        // Instrumented code runs slower still.
        let allowance: Duration = .seconds(6) * TestTiming.scale
        // Measured from the short deadline for every row: the long one only ends a hang, and a
        // row must not end late however long it was allowed.
        #expect(elapsed < Self.deadline + allowance, "ended \(elapsed) after the start")
        if case .error(let code, _) = outcome, code != .httpStatus {
            #expect(await OpenSockets.none(to: server.port), "the failed connection was closed")
        }
    }

    /// Rows where an answer carries more bytes than it may: the extra bytes must never become
    /// the answer to the next request on that connection.
    static let overlongAnswers: [(name: String, method: HTTPMethod, head: String, first: Outcome)] = [
        ("Content-Length smaller than the body", .get, "HTTP/1.1 200 OK\r\n\(json)Content-Length: 2\r\n", .body("hi")),
        ("204 with a body", .get, "HTTP/1.1 204 No Content\r\n\(json)", .body("")),
        ("304 with a body", .get, "HTTP/1.1 304 Not Modified\r\n\(json)", .error(.httpStatus, status: 304)),
        ("HEAD answered with a body", .head, "HTTP/1.1 200 OK\r\n\(json)Content-Length: 2\r\n", .body("")),
    ]

    @Test(
        "extra bytes after an answer never become the next answer on the connection, sent with it or later",
        arguments: 0..<4, [false, true])
    func overlongAnswer(_ index: Int, later: Bool) async throws {
        let row = Self.overlongAnswers[index]
        let smuggled = "HTTP/1.1 200 OK\r\n\(Self.json)Content-Length: 5\r\n\r\nstale"
        let fresh = Self.answer("HTTP/1.1 200 OK\r\n\(Self.json)Content-Length: 5\r\n", "fresh")
        // Sent with it: in the same write, so the bytes arrive together whatever the machine's
        // load (written apart, they could arrive after the next request went out, and then no
        // client can tell them from its answer). Later: once the answer has been read (the pause
        // gives the client the time to read it; a client slower than that meets the extra bytes
        // as though they came with it, which is the other case here, never a failure).
        let extra: [FaultServer.Step] =
            later
            ? [Self.answer(row.head, "hi"), .pause(.milliseconds(100)), .send(smuggled)]
            : [Self.answer(row.head, "hi" + smuggled)]
        let server = try FaultServer { connection in
            connection == 0
                ? [.readRequest] + extra + [
                    .readRequest, Self.answer("HTTP/1.1 200 OK\r\n\(Self.json)Content-Length: 6\r\n", "reused"),
                    .waitForHangUp,
                ]
                : [.readRequest, fresh, .waitForHangUp]
        }
        defer { server.stop() }
        // No row here is about a deadline.
        let client = NetworkClient(
            configuration: .init(baseURL: server.baseURL, timeout: Self.patience, transport: TestTransport.make()))
        func send(_ method: HTTPMethod) async -> Outcome {
            do {
                let response = try await client.send(
                    Endpoint<HTTPResponse>(method: method, path: "x", decoding: .response))
                return .body(String(decoding: response.body, as: UTF8.self))
            } catch {
                return .error(error.code, status: error.code == .httpStatus ? error.status : nil)
            }
        }
        let first = await send(row.method)
        if later {
            // The next request goes out only once the extra bytes wait unread on the connection,
            // or the client closed it: sent before they were written, it would get them for its
            // answer from any client. FoundationNetworking's libcurl reads an idle connection and
            // takes them in (the known issue below), which no socket table shows: there the wait
            // gives up after a second, and the known issue covers the outcome.
            let limit = TestTransport.isURLSession ? .seconds(1) * TestTiming.scale : Self.patience
            let deadline = ContinuousClock.now + limit
            var arrived = false
            while !arrived, ContinuousClock.now < deadline {
                arrived = OpenSockets.unreadBytes(from: server.port) > 0 || OpenSockets.count(to: server.port) == 0
                if !arrived { try await Task.sleep(for: .milliseconds(5)) }
            }
            if !TestTransport.isURLSession {
                #expect(arrived, "\(row.name): the extra bytes reached the client before the next request")
            }
        }
        let second = await send(.get)
        print("MATRIX \(TestTransport.name) | \(row.name)\(later ? " later" : "") | \(first), then \(second)")

        #expect(first == row.first, "\(row.name)")
        // A new connection answers "fresh", the old one "reused" once the extra bytes were
        // dropped; read out of step, the extra bytes would be the answer.
        let inStep = second == .body("fresh") || second == .body("reused")
        if TestTransport.isURLSession {
            withKnownIssue("FoundationNetworking's libcurl (before 8.0) reads the stale bytes", isIntermittent: true) {
                #expect(inStep, "\(row.name): the next answer is \(second)")
            }
        } else {
            #expect(inStep, "\(row.name): the next answer is \(second)")
        }
    }
}
