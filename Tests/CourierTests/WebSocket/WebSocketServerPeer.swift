import CourierTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A WebSocket server of the `websockets` Python library on 127.0.0.1, on a port of its own
/// choosing, for the client's tests. Its paths:
/// - `/v1/echo` (any other path too) sends each message back, except for commands in text:
///   `handshake` (the path and header fields the server received, as JSON), `closes` (the codes
///   and reasons of the connections closed so far), `close:CODE:REASON` (closes with them),
///   `drop` (drops the connection without a close), `send:N` (sends N zero bytes);
/// - `/v1/refused` answers `403` with an envelope;
/// - `/v1/plain` answers `200` with an envelope, without switching protocols;
/// - `/v1/fresh` answers business code 401001 unless the `token` header is `fresh`;
/// - `/v1/count` pings the client after each binary message, and checks that each came whole
///   and in its sender's order (its first byte names the sender, its second its number among
///   the sender's, the rest repeat the first); after `done` it answers what it counted.
///
/// A secure peer speaks TLS, with a certificate from an authority made for it.
final class WebSocketServerPeer {
    let port: Int
    /// The PEM file of the authority that signed a secure peer's certificate.
    let authorityFile: URL?
    private let pid: pid_t
    private let directory: URL

    private static let script = """
        import asyncio, http, json, os, ssl, sys
        import websockets

        port_file = sys.argv[1]
        closes = []

        async def process_request(path, headers):
            if path.startswith("/v1/refused"):
                return (http.HTTPStatus.FORBIDDEN, [("Content-Type", "application/json")], b'{"code":403,"msg":"no"}')
            if path.startswith("/v1/plain"):
                return (http.HTTPStatus.OK, [("Content-Type", "application/json")], b'{"code":0,"msg":"ok","data":1}')
            if path.startswith("/v1/fresh") and headers.get("token") != "fresh":
                return (http.HTTPStatus.OK, [("Content-Type", "application/json")], b'{"code":401001,"msg":"token expired"}')
            return None

        async def count(ws):
            counted, broken = {}, 0
            async for message in ws:
                if message == "done":
                    await ws.send(json.dumps({"senders": sorted(counted.values()), "broken": broken}))
                    continue
                sender = message[0]
                whole = message[1] == counted.get(sender, 0) % 256 and message[2:] == bytes([sender]) * (len(message) - 2)
                if not whole:
                    broken += 1
                counted[sender] = counted.get(sender, 0) + 1
                await ws.ping()

        async def handler(ws):
            if ws.path.startswith("/v1/count"):
                return await count(ws)
            try:
                async for message in ws:
                    if message == "handshake":
                        await ws.send(json.dumps({"path": ws.path, "headers": list(ws.request_headers.raw_items())}))
                    elif message == "closes":
                        await ws.send(json.dumps(closes))
                    elif isinstance(message, str) and message.startswith("close:"):
                        _, code, reason = message.split(":", 2)
                        await ws.close(int(code), reason)
                    elif message == "drop":
                        ws.transport.abort()
                    elif isinstance(message, str) and message.startswith("send:"):
                        await ws.send(b"\\x00" * int(message[5:]))
                    else:
                        await ws.send(message)
            finally:
                closes.append([ws.close_code, ws.close_reason])

        async def orphaned():
            # A test run that crashed leaves no server behind.
            while os.getppid() != 1:
                await asyncio.sleep(1)
            os._exit(0)

        async def main():
            asyncio.get_running_loop().create_task(orphaned())
            context = None
            if len(sys.argv) > 2:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[2], sys.argv[3])
            async with websockets.serve(handler, "127.0.0.1", 0, process_request=process_request,
                                        max_size=None, ping_interval=None, ssl=context) as server:
                port = server.sockets[0].getsockname()[1]
                with open(port_file + ".tmp", "w") as f:
                    f.write(str(port))
                os.rename(port_file + ".tmp", port_file)
                await asyncio.Future()

        asyncio.run(main())
        """

    /// Starts the server and waits (at most 20 s) for its port, without holding a thread of
    /// Swift's pool: a test that blocked one while Python starts would hold up every other test.
    init(secure: Bool = false) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-ws-\(UUID().uuidString)")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port")
        var arguments = ["-c", Self.script, portFile.path]
        if secure {
            try await offThePool {
                Result {
                    try LoopbackCertificates.make(in: directory, authorityName: "Courier WebSocket Test CA") {
                        _ = try Subprocess.run("/usr/bin/openssl", $0, quiet: true)
                    }
                }
            }.get()
            arguments += ["server.pem", "server.key"].map { directory.appendingPathComponent($0).path }
        }
        authorityFile = secure ? directory.appendingPathComponent("ca.pem") : nil
        pid = try Subprocess.start(WebSocketPeer.python, arguments)
        var port: Int?
        for _ in 0..<400 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let number = Int(text) {
                port = number
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let port else {
            kill(pid, SIGKILL)
            Subprocess.wait(pid)
            throw Subprocess.Failed(description: "the WebSocket server did not start")
        }
        self.port = port
    }

    var baseURL: URL { URL(string: "\(authorityFile == nil ? "http" : "https")://127.0.0.1:\(port)/v1/")! }

    func stop() {
        kill(pid, SIGKILL)
        Subprocess.wait(pid)
        try? FileManager.default.removeItem(at: directory)
    }
}
