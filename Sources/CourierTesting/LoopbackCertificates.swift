import Foundation

/// A certificate authority and a server certificate for 127.0.0.1, made with openssl for the
/// TLS servers the tests and the benchmark start. Package only: apps trust their own servers'
/// certificates.
package enum LoopbackCertificates {
    /// Makes, in `directory`, `ca.pem` (the authority, whose key is deleted once it has signed),
    /// `server.key` and `server.pem` (an EC P-256 key and its certificate for IP 127.0.0.1),
    /// each valid for two days.
    /// - Parameters:
    ///   - directory: Where the files go.
    ///   - authorityName: The authority's common name.
    ///   - openssl: Runs `/usr/bin/openssl` with the given arguments and throws when it fails
    ///     (the caller's way of starting a process).
    package static func make(
        in directory: URL, authorityName: String, openssl: ([String]) throws -> Void
    ) throws {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(
            toFile: path("ext.cnf"), atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=\(authorityName)",
            ])
        try openssl(
            ["req"] + curve + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
        try openssl([
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("ext.cnf"),
        ])
        // The authority's key is not needed again: nothing else can be signed with it.
        try FileManager.default.removeItem(atPath: path("ca.key"))
    }
}
