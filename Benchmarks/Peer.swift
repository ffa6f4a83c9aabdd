import Courier
import CourierTesting
import Foundation

/// The server the benchmark talks to on 127.0.0.1: nginx when it is installed (so the server is
/// not the bottleneck), otherwise CourierTesting's `LoopbackServer` with the same routes.
///
/// Routes: `GET /api/orders` (the 1 KB envelope), `GET /api/profile` (401 unless the `token`
/// header is `fresh`, else the envelope), `POST /api/token` (`{"code":0,"data":"fresh"}`),
/// `POST /api/upload` (reads and discards the body, answers an empty envelope) and
/// `GET /files/NAME` (files in ``filesDirectory``).
final class Peer: Sendable {
    let name: String
    let baseURL: URL
    /// Where `GET /files/NAME` reads from.
    let filesDirectory: URL
    /// Whether the peer serves ``filesDirectory`` from disk and reads uploads without keeping
    /// them (nginx); the in-process fallback would hold them in this process's memory.
    let servesFiles: Bool
    /// Whether the peer is LoopbackServer, in this process.
    let inProcess: Bool
    /// The same routes over HTTPS, when the peer is nginx and openssl made its certificates.
    let secure: SecurePeer?
    private let stopAction: @Sendable () -> Void

    static let freshToken = "fresh"

    private init(
        name: String, baseURL: URL, filesDirectory: URL, servesFiles: Bool, inProcess: Bool, secure: SecurePeer?,
        stop: @escaping @Sendable () -> Void
    ) {
        self.name = name
        self.baseURL = baseURL
        self.filesDirectory = filesDirectory
        self.servesFiles = servesFiles
        self.inProcess = inProcess
        self.secure = secure
        self.stopAction = stop
    }

    func stop() { stopAction() }

    /// nginx if `/usr/sbin/nginx` runs, else `LoopbackServer`.
    static func start(ordersBody: Data) throws -> Peer {
        let (directory, files) = try makeDirectory(ordersBody: ordersBody)
        // Without its HTTPS ports when they keep it from starting (a port taken, no HTTP/2 module).
        let withHTTPS = try? startNginx(in: directory, files: files, https: true)
        if let peer = withHTTPS ?? (try? startNginx(in: directory, files: files, https: false)) { return peer }
        print("nginx not found or failed to start (.ci/run installs it); falling back to LoopbackServer")
        return try startLoopback(in: directory, files: files, ordersBody: ordersBody)
    }

    /// `LoopbackServer`, whatever is installed (for the soak on both peers).
    static func startLoopback(ordersBody: Data) throws -> Peer {
        let (directory, files) = try makeDirectory(ordersBody: ordersBody)
        return try startLoopback(in: directory, files: files, ordersBody: ordersBody)
    }

    /// A new folder for the peer's files, with `orders.json`.
    private static func makeDirectory(ordersBody: Data) throws -> (directory: URL, files: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-bench-\(UUID().uuidString)")
        let files = directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try ordersBody.write(to: directory.appendingPathComponent("orders.json"))
        return (directory, files)
    }

    /// nginx on 127.0.0.1, or `nil` when it does not start (or a program cannot be run here:
    /// `Process` is macOS and Linux only).
    private static func startNginx(in directory: URL, files: URL, https: Bool) throws -> Peer? {
        #if os(Linux) || os(macOS)
            try startNginxProcess(in: directory, files: files, https: https)
        #else
            nil
        #endif
    }

    #if os(Linux) || os(macOS)
        private static func startNginxProcess(in directory: URL, files: URL, https: Bool) throws -> Peer? {
            let binary = "/usr/sbin/nginx"
            guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
            let port = try freePort()
            let envelope = #"{"code":0,"msg":"ok","data":"\#(freshToken)"}"#
            let routes = """
                location = /api/orders { default_type application/json; alias \(directory.path)/orders.json; }
                location = /api/profile {
                    if ($http_token != "\(freshToken)") { return 401; }
                    default_type application/json;
                    alias \(directory.path)/orders.json;
                }
                location = /api/token { default_type application/json; return 200 '\(envelope)'; }
                location = /api/upload {
                    client_max_body_size 0;
                    default_type application/json;
                    return 200 '{"code":0,"msg":"ok","data":null}';
                }
                location /files/ { alias \(files.path)/; }
                """
            try routes.write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
            // HTTPS on two more ports, when openssl can make the certificates: TLS 1.3 with HTTP/2
            // offered, and TLS 1.3 with HTTP/1.1 alone.
            let secure = https ? try? SecurePeer.make(in: directory) : nil
            let secureServers =
                secure.map { secure in
                    [(secure.http2URL, " http2"), (secure.http1URL, "")].map { url, http2 in
                        """
                        server {
                            listen 127.0.0.1:\(url.port!) ssl\(http2);
                            ssl_protocols TLSv1.3;
                            ssl_certificate \(directory.path)/server.pem;
                            ssl_certificate_key \(directory.path)/server.key;
                            include \(directory.path)/routes.conf;
                        }
                        """
                    }.joined(separator: "\n")
                } ?? ""
            let config = """
                daemon off;
                worker_processes 1;
                pid \(directory.path)/nginx.pid;
                error_log \(directory.path)/error.log warn;
                events { worker_connections 4096; }
                http {
                    access_log off;
                    keepalive_requests 1000000;
                    keepalive_timeout 120s;
                    client_body_temp_path \(directory.path)/body;
                    proxy_temp_path \(directory.path)/proxy;
                    fastcgi_temp_path \(directory.path)/fastcgi;
                    uwsgi_temp_path \(directory.path)/uwsgi;
                    scgi_temp_path \(directory.path)/scgi;
                    server {
                        listen 127.0.0.1:\(port);
                        include \(directory.path)/routes.conf;
                        location = /nginx-status { stub_status; }
                    }
                \(secureServers)
                }
                """
            let configFile = directory.appendingPathComponent("nginx.conf")
            try config.write(to: configFile, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-c", configFile.path, "-p", directory.path, "-e", "\(directory.path)/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let baseURL = URL(string: "http://127.0.0.1:\(port)/")!
            for _ in 0..<100 where process.isRunning {
                if canConnect(port: port) {
                    return Peer(
                        name: "nginx (1 worker)", baseURL: baseURL, filesDirectory: files, servesFiles: true,
                        inProcess: false, secure: secure
                    ) {
                        process.terminate()
                        process.waitUntilExit()
                        try? FileManager.default.removeItem(at: directory)
                    }
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            process.terminate()
            return nil
        }
    #endif

    private static func startLoopback(in directory: URL, files: URL, ordersBody: Data) throws -> Peer {
        let server = try LoopbackServer()
        // Its record of requests (for tests' expectations) would grow with every request.
        server.isRecording = false
        let json: HTTPHeaders = ["Content-Type": "application/json"]
        server.route("/api/orders") { _ in .init(status: 200, headers: json, body: ordersBody) }
        server.route("/api/profile") { request in
            request.headers["token"] == freshToken
                ? .init(status: 200, headers: json, body: ordersBody) : .init(status: 401)
        }
        server.route("/api/token") { _ in .json(#"{"code":0,"msg":"ok","data":"\#(freshToken)"}"#) }
        server.route("/api/upload") { _ in .json(#"{"code":0,"msg":"ok","data":null}"#) }
        return Peer(
            name: "LoopbackServer", baseURL: server.baseURL, filesDirectory: files, servesFiles: false, inProcess: true,
            secure: nil
        ) {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// How many connections nginx has accepted so far, from its status page on the plain port:
    /// the count includes the connection this asks on. `nil` from the in-process peer.
    func acceptedConnections() -> Int? {
        guard !inProcess, let port = baseURL.port else { return nil }
        let fd = connectToLoopback(port: port)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let request = Array("GET /nginx-status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        // "server accepts handled requests\n 12 12 40 \n": the first number counts this connection.
        let lines = String(decoding: answer, as: UTF8.self).split(separator: "\n")
        guard let heading = lines.firstIndex(where: { $0.hasPrefix("server accepts") }), heading + 1 < lines.count,
            let accepts = lines[heading + 1].split(separator: " ").first.flatMap({ Int($0) })
        else { return nil }
        return accepts
    }

    /// A port the system picks for a socket that is closed again at once.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Sockets.streamType, 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else { throw CocoaError(.featureUnsupported) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = connectToLoopback(port: port)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }
}

/// A TCP connection to 127.0.0.1:`port`: the descriptor, or -1 when refused.
func connectToLoopback(port: Int) -> Int32 {
    let fd = socket(AF_INET, Sockets.streamType, 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    if !connected { close(fd) }
    return connected ? fd : -1
}
