import Foundation

/// What a client does with a request while its ``ReachabilityMonitor`` says offline.
public enum ReachabilityPolicy: Sendable, Hashable {
    /// Throw ``NetworkError/Code/offline`` at once, without touching the wire (an app's
    /// "network connection failed").
    case failFast
    /// Wait until the monitor says online (or unknown), at most `timeout`, then send; throw
    /// ``NetworkError/Code/offline`` when the time runs out. Cancellation ends the wait at once.
    case waitForConnectivity(timeout: Duration)
}

/// Applies a ``ReachabilityPolicy`` before a request is sent. A class: one word in the frame
/// of each request that passes it.
final class ReachabilityGate: Sendable {
    let monitor: any ReachabilityMonitor
    let policy: ReachabilityPolicy

    init(monitor: any ReachabilityMonitor, policy: ReachabilityPolicy) {
        self.monitor = monitor
        self.policy = policy
    }

    /// Returns when the request may go; throws ``NetworkError/Code/offline`` or
    /// ``NetworkError/Code/cancelled`` otherwise. Loopback hosts are always reachable, unless
    /// the monitor ``ReachabilityMonitor/gatesLoopback``. A wait for the network goes in
    /// `timeline`, however it ends.
    func admit(_ url: URL, timeline: TimelineRecorder? = nil) async throws(NetworkError) {
        guard monitor.status == .offline, monitor.gatesLoopback || !Self.isLoopback(url) else { return }
        switch policy {
        case .failFast:
            throw NetworkError(.offline, "The device is offline; the request was not sent.")
        case .waitForConnectivity(let timeout):
            let start = timeline?.now
            defer { if let start { timeline?.waited(.reachability, since: start) } }
            try await waitForConnectivity(timeout)
        }
    }

    private func waitForConnectivity(_ timeout: Duration) async throws(NetworkError) {
        let monitor = self.monitor
        let connected = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in monitor.statusUpdates() where status != .offline { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if Task.isCancelled { throw NetworkError(.cancelled, "The request was cancelled while waiting to be online.") }
        guard connected else {
            throw NetworkError(.offline, "The device stayed offline for \(timeout); the request was not sent.")
        }
    }

    /// Whether a URL's host is this machine: `localhost`, `::1`, or an IPv4 address in
    /// 127.0.0.0/8 written as four decimal parts (`127.example.com` is a name like any other).
    static func isLoopback(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in part.allSatisfy { $0.isASCII && $0.isNumber } && UInt8(part) != nil }
    }
}
