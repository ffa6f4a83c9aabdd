#if os(Linux)
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// CurlTransport under a cancellation storm: every request ends, libcurl keeps no handle,
    /// and no descriptor leaks.
    @Suite struct CurlStormTests {
        /// This process's open sockets connected to `port` on 127.0.0.1 (the client side of
        /// connections to the test server), found through `/proc/net/tcp` and `/proc/self/fd`,
        /// so descriptors of suites running in parallel do not count.
        private static func clientSockets(to port: Int) -> Int {
            // Read to the end: /proc files report no size, and a one-shot read stops at 4 KB.
            guard let data = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() else { return -1 }
            let table = String(decoding: data, as: UTF8.self)
            let remote = String(format: "0100007F:%04X", port)
            let inodes = Set(
                table.split(separator: "\n").dropFirst().compactMap { line -> String? in
                    let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                    return columns.count > 9 && columns[2] == remote ? String(columns[9]) : nil
                })
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return descriptors.filter { name in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                    target.hasPrefix("socket:[")
                else { return false }
                return inodes.contains(String(target.dropFirst(8).dropLast()))
            }.count
        }

        @Test("10,000 requests cancelled at random moments: no crash, hang, leaked handle or descriptor")
        func storm() async throws {
            let server = try LoopbackServer()
            let port = server.baseURL.port ?? 0
            CancellationWave.route(on: server, path: "/item")
            var transport: CurlTransport? = try CurlTransport()
            var client: NetworkClient? = NetworkClient(
                configuration: .init(baseURL: server.baseURL, transport: transport))
            // Instrumented or loaded, requests take longer: the storm widens its window of cancel
            // moments until some finish first (a sanitizer run once saw none do).
            let (outcomes, window) = await CancellationWave.storm(
                client!, path: "item", waves: 10_000 / 50, size: 50, delays: 0...3, startWindow: 15_000)
            print("curl cancellation storm:", outcomes, "last window:", window, "µs")
            #expect(outcomes.values.reduce(0, +) == 10_000)
            #expect(Set(outcomes.keys).isSubset(of: ["success", "cancelled"]), "\(outcomes)")
            #expect(outcomes["success", default: 0] > 0 && outcomes["cancelled", default: 0] > 0)
            #expect(try await client?.send(Endpoint<Int>.get("item")) == 0, "the transport still works")
            // Cancelled transfers leave libcurl on the transport's own thread, a moment later (on a
            // loaded machine, seconds later); a handle kept for good stays however long one waits.
            let patience = Duration.seconds(30) * TestTiming.scale
            var deadline = ContinuousClock.now + patience
            var settled = transport?.activeTransferCount == 0
            while !settled, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
                settled = transport?.activeTransferCount == 0
            }
            #expect(settled, "libcurl holds \(transport?.activeTransferCount ?? -1) handles")
            let connected = Self.clientSockets(to: port)
            #expect(
                connected >= 1 && connected <= 16, "kept-alive connections, at most the per-host limit: \(connected)")
            client = nil
            transport = nil
            var left = Self.clientSockets(to: port)
            deadline = ContinuousClock.now + patience
            while left > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
                left = Self.clientSockets(to: port)
            }
            server.stop()
            #expect(left == 0, "client sockets still open after the transport was released: \(left)")
        }
    }
#endif
