#if os(Linux)
    import Courier
    import Foundation
    import Testing

    /// The Linux monitor against a real network namespace made by the test: offline → online
    /// (link up, address, default route) → offline (link down), each seen as it happens (the
    /// monitor reads netlink's notices; it does not poll).
    @Suite struct NetlinkReachabilityTests {
        /// Whether this machine can make network namespaces: root and `ip` (CI has both).
        static let canMakeNamespaces = getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip)
        static let ip =
            ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/ip"

        /// Runs `ip` on a Dispatch thread (not on Swift's cooperative pool, which it would stall),
        /// with `posix_spawn` (see ``Subprocess``), and returns its exit status.
        @discardableResult
        private static func run(_ arguments: String...) async throws -> Int32 {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try Subprocess.exitStatus(ip, arguments) })
                }
            }
        }

        /// Makes a network namespace and a monitor of it; delete it with ``deleteNamespace(_:)``.
        private static func makeNamespace() async throws -> (name: String, monitor: NetlinkReachability) {
            let name = "courier-\(UInt32.random(in: 0...UInt32.max))"
            #expect(try await run("netns", "add", name) == 0)
            return (name, NetlinkReachability(networkNamespace: "/var/run/netns/\(name)"))
        }

        /// Deletes the namespace synchronously (from `defer`, which cannot await).
        private static func deleteNamespace(_ name: String) {
            _ = try? Subprocess.exitStatus(ip, ["netns", "del", name])
        }

        /// Waits up to `limit` for the monitor to report `expected`; returns how long it took. The
        /// monitor hears of a change at once, but a loaded machine can be slow to run it: the
        /// limit only ends a wait for a change it never reports.
        private static func time(
            until expected: ReachabilityStatus, in monitor: NetlinkReachability,
            limit: Duration = .seconds(10) * TestTiming.scale
        ) async -> Duration? {
            let start = ContinuousClock.now
            return await withTaskGroup(of: Duration?.self) { group in
                group.addTask {
                    for await status in monitor.statusUpdates() where status == expected {
                        return ContinuousClock.now - start
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }

        @Test(
            "a namespace goes offline → online → offline and the monitor follows each change",
            .enabled(if: canMakeNamespaces, "needs root and iproute2 to make a network namespace"))
        func namespace() async throws {
            let (name, monitor) = try await Self.makeNamespace()
            defer { Self.deleteNamespace(name) }

            // Only `lo` exists: offline.
            #expect(await Self.time(until: .offline, in: monitor) != nil)

            try await Self.run("-n", name, "link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b")
            try await Self.run("-n", name, "link", "set", "veth-a", "up")
            try await Self.run("-n", name, "link", "set", "veth-b", "up")
            try await Self.run("-n", name, "addr", "add", "192.0.2.2/24", "dev", "veth-b")
            #expect(monitor.status == .offline, "an address without a default route is not online")
            #expect(try await Self.run("-n", name, "route", "add", "default", "via", "192.0.2.1") == 0)
            let up = await Self.time(until: .online(.other), in: monitor)
            #expect(up != nil)

            #expect(try await Self.run("-n", name, "link", "set", "veth-b", "down") == 0)
            let down = await Self.time(until: .offline, in: monitor)
            #expect(down != nil)
            print(
                "netlink reachability: online seen after \(up.map { "\($0)" } ?? "never"), offline after \(down.map { "\($0)" } ?? "never")"
            )
        }

        @Test(
            "an interface with an index above 256 (busy hosts, recreated tunnels) is seen online",
            .enabled(if: canMakeNamespaces, "needs root and iproute2 to make a network namespace"))
        func largeInterfaceIndex() async throws {
            let (name, monitor) = try await Self.makeNamespace()
            defer { Self.deleteNamespace(name) }
            #expect(await Self.time(until: .offline, in: monitor) != nil)

            let made = try await Self.run(
                "-n", name, "link", "add", "veth-a", "index", "70000", "type", "veth", "peer", "name", "veth-b",
                "index", "300")
            #expect(made == 0)
            try await Self.run("-n", name, "link", "set", "veth-a", "up")
            try await Self.run("-n", name, "link", "set", "veth-b", "up")
            try await Self.run("-n", name, "addr", "add", "192.0.2.2/24", "dev", "veth-b")
            try await Self.run("-n", name, "route", "add", "default", "via", "192.0.2.1")

            #expect(await Self.time(until: .online(.other), in: monitor) != nil)
        }

        @Test(
            "a default route over several paths (ECMP, no single interface) is seen online",
            .enabled(if: canMakeNamespaces, "needs root and iproute2 to make a network namespace"))
        func multipathDefaultRoute() async throws {
            let (name, monitor) = try await Self.makeNamespace()
            defer { Self.deleteNamespace(name) }
            #expect(await Self.time(until: .offline, in: monitor) != nil)

            for (pair, address) in [(("veth-a", "veth-b"), "192.0.2.2/24"), (("veth-c", "veth-d"), "198.51.100.2/24")] {
                try await Self.run("-n", name, "link", "add", pair.0, "type", "veth", "peer", "name", pair.1)
                try await Self.run("-n", name, "link", "set", pair.0, "up")
                try await Self.run("-n", name, "link", "set", pair.1, "up")
                try await Self.run("-n", name, "addr", "add", address, "dev", pair.1)
            }
            let added = try await Self.run(
                "-n", name, "route", "add", "default", "nexthop", "via", "192.0.2.1", "dev", "veth-b", "nexthop",
                "via", "198.51.100.1", "dev", "veth-d")
            #expect(added == 0)

            #expect(await Self.time(until: .online(.other), in: monitor) != nil)
        }
    }
#endif
