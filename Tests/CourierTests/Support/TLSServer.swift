import CourierTesting
import Foundation

/// A TLS server on 127.0.0.1 with a certificate from a certificate authority made for the test:
/// `openssl s_server -www` (HTTP/1.0), or nginx speaking HTTP/2 and HTTP/1.1. `stop()` ends it
/// and removes its files.
final class TLSServer: Sendable {
    /// Which program serves.
    enum Kind: Sendable {
        case openssl
        case nginx
    }

    /// Whether nginx is installed (`.ci/run` installs it).
    static let nginxAvailable = FileManager.default.isExecutableFile(atPath: nginx)
    private static let nginx = "/usr/sbin/nginx"

    let baseURL: URL
    /// The PEM file of the test's certificate authority.
    let authorityFile: URL
    /// The base64 SHA-256 of the server key's SubjectPublicKeyInfo, computed by openssl.
    let publicKeyPin: String
    private let directory: URL
    /// The server's process, started with `posix_spawn` (see ``Subprocess``), and whether it
    /// is nginx, which ends on SIGTERM.
    private let process: pid_t
    private let isNginx: Bool

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private init(
        baseURL: URL, authorityFile: URL, publicKeyPin: String, directory: URL, process: pid_t, isNginx: Bool
    ) {
        self.baseURL = baseURL
        self.authorityFile = authorityFile
        self.publicKeyPin = publicKeyPin
        self.directory = directory
        self.process = process
        self.isNginx = isNginx
    }

    /// Makes the certificates and starts the server, on a Dispatch thread (never the
    /// cooperative pool).
    static func start(_ kind: Kind = .openssl) async throws -> TLSServer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try startBlocking(kind) }) }
        }
    }

    /// How many connections nginx answered requests on so far (nginx only: the distinct
    /// connection numbers in its access log).
    func connectionsAnswered() throws -> Int {
        let log = try String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)
        return Set(log.split(separator: "\n")).count
    }

    func stop() {
        // s_server does not end on SIGTERM while it waits in accept; nginx ends its workers on it.
        kill(process, isNginx ? SIGTERM : SIGKILL)
        Subprocess.wait(process)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func startBlocking(_ kind: Kind) throws -> TLSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try LoopbackCertificates.make(in: directory, authorityName: "Courier Test CA") { try run($0) }
        try run(["pkey", "-in", path("server.key"), "-pubout", "-outform", "der", "-out", path("spki.der")])
        let digest = try run(["dgst", "-sha256", "-binary", path("spki.der")])
        let port = RefusingPort().port  // released at once, for s_server to bind
        let command: (path: String, arguments: [String])
        switch kind {
        case .openssl:
            command = (
                openssl,
                [
                    "s_server", "-accept", "127.0.0.1:\(port)", "-cert", path("server.pem"), "-key", path("server.key"),
                    "-www", "-quiet",
                ]
            )
        case .nginx:
            try """
            daemon off;
            worker_processes 1;
            pid \(path("nginx.pid"));
            error_log \(path("error.log")) warn;
            events { worker_connections 256; }
            http {
                log_format connection '$connection';
                access_log \(path("access.log")) connection;
                client_body_temp_path \(path("body"));
                proxy_temp_path \(path("proxy"));
                fastcgi_temp_path \(path("fastcgi"));
                uwsgi_temp_path \(path("uwsgi"));
                scgi_temp_path \(path("scgi"));
                # Pinned, so that tests do not depend on the version's defaults.
                keepalive_requests 100000;
                http2_max_concurrent_streams 128;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(path("server.pem"));
                    ssl_certificate_key \(path("server.key"));
                    location / { default_type text/plain; return 200 "hello over TLS"; }
                }
            }
            """.write(toFile: path("nginx.conf"), atomically: true, encoding: .utf8)
            command = (nginx, ["-c", path("nginx.conf"), "-p", directory.path, "-e", path("error.log")])
        }
        let server = try Subprocess.start(command.path, command.arguments)
        // It listens within milliseconds when the machine is idle; the limit only ends a wait
        // for one that never starts.
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while ContinuousClock.now < deadline {
            if (try? RawSocket(port: port)) != nil {
                return TLSServer(
                    baseURL: URL(string: "https://127.0.0.1:\(port)/")!,
                    authorityFile: URL(fileURLWithPath: path("ca.pem")),
                    publicKeyPin: digest.base64EncodedString(), directory: directory, process: server,
                    isNginx: kind == .nginx)
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(server, SIGKILL)
        Subprocess.wait(server)
        throw Failure(description: "openssl s_server did not start")
    }

    private static let openssl = "/usr/bin/openssl"

    @discardableResult
    private static func run(_ arguments: [String]) throws -> Data {
        do {
            return try Subprocess.run(openssl, arguments, quiet: true)
        } catch {
            throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(error)")
        }
    }
}
