#if canImport(Network)
    import Network

    /// Reachability on Apple platforms from `NWPathMonitor`. (Not compiled on Linux, where this
    /// project is built and tested; kept deliberately small.)
    public final class PathReachability: ReachabilityMonitor {
        private let broadcaster = StatusBroadcaster(.unknown)
        private let monitor = NWPathMonitor()

        /// Starts monitoring.
        public init() {
            let broadcaster = self.broadcaster
            monitor.pathUpdateHandler = { path in
                guard path.status == .satisfied else { return broadcaster.update(.offline) }
                let kind: ConnectionKind =
                    path.usesInterfaceType(.wifi)
                    ? .wifi
                    : path.usesInterfaceType(.cellular)
                        ? .cellular : path.usesInterfaceType(.wiredEthernet) ? .wired : .other
                broadcaster.update(.online(kind))
            }
            monitor.start(queue: DispatchQueue(label: "Courier.PathReachability"))
        }

        deinit { monitor.cancel() }

        /// The current status.
        public var status: ReachabilityStatus { broadcaster.value }

        /// The current status, then every change.
        /// - Returns: The stream.
        public func statusUpdates() -> AsyncStream<ReachabilityStatus> { broadcaster.stream() }
    }
#endif
