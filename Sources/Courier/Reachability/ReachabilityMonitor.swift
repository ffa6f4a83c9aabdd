import Foundation

/// Whether the device can reach the network, as well as a monitor can tell.
public enum ReachabilityStatus: Sendable, Hashable, CustomStringConvertible {
    /// Nothing is known yet (or the platform cannot tell). Never blocks a request.
    case unknown
    /// No usable network path: requests fail at once or wait, as the client's policy says.
    case offline
    /// A usable path, of this kind when known.
    case online(ConnectionKind)

    /// `unknown`, `offline` or `online (kind)`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .offline: "offline"
        case .online(let kind): "online (\(kind.rawValue))"
        }
    }
}

/// The kind of network path; an open set.
public struct ConnectionKind: RawRepresentable, Hashable, Sendable {
    /// The kind's name.
    public let rawValue: String
    /// Creates a kind.
    /// - Parameter rawValue: The name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wi-Fi.
    public static let wifi = ConnectionKind(rawValue: "wifi")
    /// A cellular network.
    public static let cellular = ConnectionKind(rawValue: "cellular")
    /// A wired network (Ethernet, a virtual link).
    public static let wired = ConnectionKind(rawValue: "wired")
    /// A path of another or unknown kind.
    public static let other = ConnectionKind(rawValue: "other")
}

/// Reports reachability: the current status and every change. A hint for failing fast or
/// waiting, never a blind gate: ``ReachabilityStatus/unknown`` lets requests through, and a
/// transport failure is reported as what it is. Requests to this machine (`localhost`, an
/// address in 127.0.0.0/8, `::1`) are let through whatever the status, unless the monitor
/// ``gatesLoopback``.
public protocol ReachabilityMonitor: Sendable {
    /// The current status.
    var status: ReachabilityStatus { get }
    /// Whether requests to this machine wait or fail too while the status is offline; `false`
    /// by default, since a device without a network still reaches itself.
    var gatesLoopback: Bool { get }
    /// A new stream of statuses: the current one first, then every change. It ends when the
    /// consumer stops iterating.
    /// - Returns: The stream.
    func statusUpdates() -> AsyncStream<ReachabilityStatus>
}

extension ReachabilityMonitor {
    /// `false`: requests to this machine are let through whatever the status.
    public var gatesLoopback: Bool { false }
}

/// Tells listeners about reachability changes.
typealias StatusBroadcaster = Broadcaster<ReachabilityStatus>

/// A monitor whose status is set by hand: for tests, and for apps that know better.
///
/// ```swift
/// // A test of "online, then offline" against a LoopbackServer on 127.0.0.1:
/// let reachability = ManualReachability(.online(.wifi), gatesLoopback: true)
/// ```
public final class ManualReachability: ReachabilityMonitor {
    private let broadcaster: StatusBroadcaster
    /// Whether requests to this machine wait or fail too while the status is offline.
    public let gatesLoopback: Bool

    /// Creates a monitor.
    /// - Parameters:
    ///   - status: The initial status.
    ///   - gatesLoopback: Whether requests to this machine (a `LoopbackServer` in a test) wait or
    ///     fail too while the status is offline; `false` by default.
    public init(_ status: ReachabilityStatus = .unknown, gatesLoopback: Bool = false) {
        broadcaster = StatusBroadcaster(status)
        self.gatesLoopback = gatesLoopback
    }

    /// The current status.
    public var status: ReachabilityStatus { broadcaster.value }

    /// The current status, then every change.
    /// - Returns: The stream.
    public func statusUpdates() -> AsyncStream<ReachabilityStatus> { broadcaster.stream() }

    /// Changes the status.
    /// - Parameter status: The new status.
    public func set(_ status: ReachabilityStatus) { broadcaster.update(status) }
}

/// A monitor that always says online: no gating at all.
public struct AlwaysOnlineReachability: ReachabilityMonitor {
    /// Creates the monitor.
    public init() {}

    /// Always `.online(.other)`.
    public var status: ReachabilityStatus { .online(.other) }

    /// A stream with one element, `.online(.other)`, that never ends.
    /// - Returns: The stream.
    public func statusUpdates() -> AsyncStream<ReachabilityStatus> {
        AsyncStream { $0.yield(.online(.other)) }
    }
}
