#if canImport(Network)
    import Network

    /// Reachability on Apple platforms from `NWPathMonitor`. (Not compiled on Linux, where this
    /// project is built and tested; kept deliberately small, its reading of a path is
    /// `PathReading`, which the Linux tests check.)
    ///
    /// On watchOS, `NWPathMonitor` reports no path outside the few cases Apple allows low-level
    /// networking in, so ``SystemReachability`` does not use it there.
    public final class PathReachability: ReachabilityMonitor {
        private let broadcaster = StatusBroadcaster(.unknown)
        private let monitor = NWPathMonitor()

        /// Starts monitoring.
        public init() {
            let broadcaster = self.broadcaster
            monitor.pathUpdateHandler = { path in
                let reading: PathReading =
                    switch path.status {
                    case .satisfied: .satisfied
                    case .unsatisfied: .unsatisfied
                    case .requiresConnection: .requiresConnection
                    @unknown default: .requiresConnection
                    }
                let interfaces: [(NWInterface.InterfaceType, ConnectionKind)] = [
                    (.wifi, .wifi), (.cellular, .cellular), (.wiredEthernet, .wired),
                ]
                let kinds = interfaces.filter { path.usesInterfaceType($0.0) }.map(\.1)
                broadcaster.update(reading.status(using: kinds))
            }
            monitor.start(queue: DispatchQueue(label: "Courier.PathReachability"))
        }

        deinit {
            monitor.cancel()
            broadcaster.finish()
        }

        /// The current status.
        public var status: ReachabilityStatus { broadcaster.value }

        /// The current status, then every change.
        /// - Returns: The stream.
        public func statusUpdates() -> AsyncStream<ReachabilityStatus> { broadcaster.stream() }
    }
#endif
