#if os(Linux)
    import CNetlink
    import Foundation
    import Glibc

    /// Reachability on Linux, driven by the kernel's routing events (a netlink route socket
    /// subscribed to link, address and route changes): no polling.
    ///
    /// Online means a non-loopback interface is up and running, has a global address, and carries
    /// a default route. Each event triggers one fresh read of links, addresses and routes.
    ///
    /// ```swift
    /// var configuration = NetworkClient.Configuration(baseURL: url)
    /// configuration.reachability = NetlinkReachability()
    /// ```
    public final class NetlinkReachability: ReachabilityMonitor {
        private let broadcaster = StatusBroadcaster(.unknown)
        private let stopWriter: Int32

        /// Starts monitoring on a thread of its own.
        /// - Parameter networkNamespace: The path of a network namespace to watch instead of the
        ///   process's own (for example `/var/run/netns/NAME`), for tests and containers.
        public init(networkNamespace: String? = nil) {
            var pipeEnds: [Int32] = [0, 0]
            let piped = pipe(&pipeEnds) == 0
            stopWriter = piped ? pipeEnds[1] : -1
            let (broadcaster, stopReader) = (self.broadcaster, piped ? pipeEnds[0] : -1)
            let thread = Thread {
                Self.run(broadcaster: broadcaster, stopReader: stopReader, namespace: networkNamespace)
            }
            thread.name = "Courier.NetlinkReachability"
            thread.start()
        }

        deinit {
            // Wakes the monitor thread, which closes its sockets and the pipe's read end.
            var byte: UInt8 = 1
            _ = write(stopWriter, &byte, 1)
            close(stopWriter)
        }

        /// The current status; ``ReachabilityStatus/unknown`` until the first read of the tables
        /// (or when netlink cannot be used).
        public var status: ReachabilityStatus { broadcaster.value }

        /// The current status, then every change.
        /// - Returns: The stream.
        public func statusUpdates() -> AsyncStream<ReachabilityStatus> { broadcaster.stream() }

        private static func run(broadcaster: StatusBroadcaster, stopReader: Int32, namespace: String?) {
            defer { close(stopReader) }
            if let namespace, courier_enter_network_namespace(namespace) != 0 { return }
            let monitor = courier_netlink_open_monitor()
            guard monitor >= 0 else { return }
            defer { close(monitor) }
            repeat {
                var state = courier_net_state()
                if courier_netlink_snapshot(&state) == 0 {
                    broadcaster.update(state.online != 0 ? .online(.other) : .offline)
                }
            } while courier_netlink_wait(monitor, stopReader) == 1
        }
    }
#endif
