import CourierTesting
import Foundation

/// The peer's HTTPS side (nginx only): a certificate authority and a server certificate for
/// 127.0.0.1 made with openssl at start, and two ports that serve the same routes over TLS 1.3,
/// one offering HTTP/2 and one HTTP/1.1 alone.
struct SecurePeer: Sendable {
    /// TLS 1.3; HTTP/2 offered (and HTTP/1.1 to a client that does not ask for it).
    let http2URL: URL
    /// TLS 1.3; HTTP/1.1 only.
    let http1URL: URL
    /// The PEM file of the authority that signed the server's certificate.
    let authorityFile: URL

    /// Makes the key and certificates in `directory` (`server.pem`, `server.key`, `ca.pem`) and
    /// picks the two ports.
    static func make(in directory: URL) throws -> SecurePeer {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try LoopbackCertificates.make(in: directory, authorityName: "Courier Benchmark CA", openssl: openssl)
        return SecurePeer(
            http2URL: URL(string: "https://127.0.0.1:\(try Peer.freePort())/")!,
            http1URL: URL(string: "https://127.0.0.1:\(try Peer.freePort())/")!,
            authorityFile: URL(fileURLWithPath: path("ca.pem")))
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static func openssl(_ arguments: [String]) throws {
        #if os(Linux) || os(macOS)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed")
            }
        #else
            throw Failure(description: "no program can be run here")
        #endif
    }
}
