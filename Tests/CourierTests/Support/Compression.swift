import Foundation

/// Compressed bodies for tests, made with the `gzip` command (in every Debian base system).
enum Compression {
    /// `data` in gzip format.
    static func gzip(_ data: Data) throws -> Data {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gzip-\(UUID().uuidString)")
        try data.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let compressed = try Subprocess.run("/bin/gzip", ["-c", "-9", "-n", input.path])
        return compressed
    }

    /// `data` in zlib format (`Content-Encoding: deflate`): the gzip stream's deflate data with
    /// a zlib header and an Adler-32 trailer.
    static func deflate(_ data: Data) throws -> Data {
        let gzipped = try gzip(data)
        var result = Data([0x78, 0xDA])
        result.append(gzipped[(gzipped.startIndex + 10)..<(gzipped.endIndex - 8)])
        var a: UInt32 = 1
        var b: UInt32 = 0
        data.withUnsafeBytes { bytes in
            for byte in bytes {
                a = (a + UInt32(byte)) % 65_521
                b = (b + a) % 65_521
            }
        }
        let adler = b << 16 | a
        result.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: adler >> (24 - 8 * $0)) })
        return result
    }
}
