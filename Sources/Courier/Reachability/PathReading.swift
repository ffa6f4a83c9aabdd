/// What an Apple network path (`NWPath`) says, read as a ``ReachabilityStatus``. Shared code,
/// so the Linux tests check the reading `PathReachability` makes.
enum PathReading: Equatable {
    /// `NWPath.Status.satisfied`.
    case satisfied
    /// `.requiresConnection`: not up yet, but a new connection may bring it up (VPN on demand,
    /// a cellular link to wake). Read as `unknown`, which never holds a request back: the
    /// request is what brings the path up.
    case requiresConnection
    /// `.unsatisfied`.
    case unsatisfied

    /// The status, with the kind of the first interface type the path uses, in the order
    /// Wi-Fi, cellular, wired.
    /// - Parameter kinds: The kinds of the interface types the path uses.
    func status(using kinds: [ConnectionKind]) -> ReachabilityStatus {
        switch self {
        case .unsatisfied: .offline
        case .requiresConnection: .unknown
        case .satisfied: .online([.wifi, .cellular, .wired].first(where: kinds.contains) ?? .other)
        }
    }
}
