import Courier
import Foundation

/// What a ``RecordingTransport`` does with a request.
public enum RecordingMode: String, Sendable, Hashable, CaseIterable {
    /// Answer every request from the recording and send nothing; a request the recording does
    /// not hold fails with a diff against the closest recorded one. The default, for CI.
    case replay
    /// Answer what the recording holds; send the rest to the backend and add them.
    case recordMissing = "missing"
    /// Send every request to the backend and write a new recording of them.
    case recordAll = "all"

    /// The environment variable that chooses the mode when the code does not:
    /// `COURIER_RECORDING=replay`, `missing` or `all`.
    public static let environmentVariable = "COURIER_RECORDING"

    /// The mode `COURIER_RECORDING` names, or `fallback` when it is unset or empty.
    /// - Parameters:
    ///   - environment: The environment to read; the process's by default.
    ///   - fallback: The mode without the variable.
    /// - Returns: The mode.
    /// - Throws: `NetworkError.Code.invalidRequest` when the variable names no mode.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, default fallback: RecordingMode = .replay
    ) throws(NetworkError) -> RecordingMode {
        guard let value = environment[environmentVariable], !value.isEmpty else {
            return fallback
        }
        guard let mode = RecordingMode(rawValue: value.lowercased()) else {
            throw NetworkError(
                .invalidRequest,
                "\(environmentVariable)=\(value.debugDescription) names no mode: use replay, missing or all.")
        }
        return mode
    }
}

/// The parts of requests that change on every call (a timestamp, a nonce, a request ID), which
/// a ``RecordingTransport`` leaves out when it matches a request with a recorded one: query
/// and form parameters and JSON fields at any depth with these names. The signing layer's
/// timestamp, nonce and signature are left out without being named here.
public struct VolatileParts: Sendable, Hashable {
    /// Names left out on every path.
    public var names: Set<String>
    /// Names left out on one URL path only (`/v1/orders`), as the server sees it.
    public var namesByPath: [String: Set<String>]

    /// Nothing but the signing layer's parts.
    public static let none = VolatileParts()

    /// Creates a declaration.
    /// - Parameters:
    ///   - names: Names left out on every path.
    ///   - namesByPath: Names left out on one path each.
    public init(_ names: Set<String> = [], namesByPath: [String: Set<String>] = [:]) {
        self.names = names
        self.namesByPath = namesByPath
    }

    /// The names left out on `path`, and `extra`, lower-cased.
    func names(onPath path: String, adding extra: [String]) -> Set<String> {
        Set((names.union(namesByPath[path] ?? []).union(extra)).map { $0.lowercased() })
    }
}
