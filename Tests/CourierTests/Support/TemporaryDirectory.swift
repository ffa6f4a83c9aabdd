import Foundation

/// A fresh directory for one test, removed by ``remove()``.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The names of the files in it, sorted (hidden ones included).
    var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Deterministic, non-repeating-looking bytes: every byte value occurs, so binary content is
/// tested, and a mismatch anywhere is caught.
func patternedBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBufferPointer { buffer in
        for index in buffer.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            buffer[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
    }
    return Data(bytes)
}

/// Progress values seen on a stream, collected until it ends.
func collect<S: AsyncSequence & Sendable>(_ stream: S) -> Task<[S.Element], Never> where S.Element: Sendable {
    Task {
        var values: [S.Element] = []
        do {
            for try await value in stream { values.append(value) }
        } catch {}
        return values
    }
}
