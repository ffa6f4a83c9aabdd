import Foundation

/// One fuzz target: reads an input and traps when a promised property does not hold.
struct FuzzTarget: Sendable {
    let name: String
    /// What it checks, beyond "no crash".
    let summary: String
    let check: @Sendable (UnsafeRawBufferPointer) -> Void

    static let all: [FuzzTarget] =
        parsingTargets + redactionTargets + streamTargets + pageTargets + bodyTargets + signingTargets
        + platformTargets + webSocketTargets
}

/// Aborts with `message` unless `condition` holds: libFuzzer keeps the input. (`abort`, not
/// `fatalError`, which is a SIGTRAP on arm64, a signal libFuzzer does not catch.)
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    FileHandle.standardError.write(Data("property violated: \(message())\n".utf8))
    abort()
}

/// An input cut into pieces at NUL bytes, each read as UTF-8 (invalid bytes become U+FFFD).
func texts(_ input: UnsafeRawBufferPointer) -> [String] {
    input.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
}
