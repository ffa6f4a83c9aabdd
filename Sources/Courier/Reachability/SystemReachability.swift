/// The platform's reachability monitor, shared by every client of the process:
/// ``NetlinkReachability`` on Linux, `PathReachability` (`NWPathMonitor`) on Apple platforms
/// but watchOS, ``AlwaysOnlineReachability`` elsewhere (watchOS among them, where
/// `NWPathMonitor` sees no path for ordinary apps although `URLSession` works).
///
/// Clients use no monitor unless told to, so tests stay independent of the machine's network:
///
/// ```swift
/// configuration.reachability = SystemReachability.shared
/// configuration.reachabilityPolicy = .waitForConnectivity(timeout: .seconds(10))
/// ```
public enum SystemReachability {
    /// The shared monitor, started on first use.
    public static let shared: any ReachabilityMonitor = {
        #if os(Linux)
            NetlinkReachability()
        #elseif canImport(Network) && !os(watchOS)
            PathReachability()
        #else
            AlwaysOnlineReachability()
        #endif
    }()
}
