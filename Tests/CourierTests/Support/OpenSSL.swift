import Foundation

/// Runs the `openssl` command line as a separate process: an implementation independent of
/// Courier's, to cross-check digests and signatures.
enum OpenSSL {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "openssl is not installed; .ci/run installs it (apt-get install openssl)" }
    }

    /// `openssl dgst <arguments> -r` over `input`, returning the hex digest. The process runs on
    /// a Dispatch thread: waiting for it on Swift's cooperative pool (two threads here) would
    /// stall every other test.
    static func digest(_ input: Data, arguments: [String]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try digestBlocking(input, arguments: arguments) })
            }
        }
    }

    private static func digestBlocking(_ input: Data, arguments: [String]) throws -> String {
        guard
            let path = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile)
        else { throw Missing() }
        let output = try Subprocess.run(path, ["dgst"] + arguments + ["-r"], input: input)
        return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}
