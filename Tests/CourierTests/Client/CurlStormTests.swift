#if os(Linux)
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// CurlTransport under a cancellation storm: every request ends, libcurl keeps no handle,
    /// and no descriptor leaks.
    @Suite struct CurlStormTests {
        private static func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }

        @Test("10,000 requests cancelled at random moments: no crash, hang, leaked handle or descriptor")
        func storm() async throws {
            let before = Self.openDescriptors()
            let server = try LoopbackServer()
            server.route("/item") { request in
                let delay = Int(request.query["delay"] ?? "0") ?? 0
                return LoopbackServer.Response.envelope(data: delay).delayed(by: .milliseconds(delay))
            }
            var transport: CurlTransport? = try CurlTransport()
            var client: NetworkClient? = NetworkClient(
                configuration: .init(baseURL: server.baseURL, transport: transport))
            var outcomes: [String: Int] = [:]
            for _ in 0..<(10_000 / 50) {
                guard let client else { break }
                let wave = await withTaskGroup(of: String.self) { group in
                    for _ in 0..<50 {
                        let delay = Int.random(in: 0...3)
                        let cancelAfter = Duration.microseconds(Int.random(in: 0...15_000))
                        group.addTask {
                            let task = Task {
                                try await client.send(Endpoint<Int>.get("item", query: ["delay": "\(delay)"]))
                            }
                            try? await Task.sleep(for: cancelAfter)
                            task.cancel()
                            do {
                                return try await task.value == delay ? "success" : "wrong value"
                            } catch let error as NetworkError {
                                return error.code.rawValue
                            } catch {
                                return "foreign error"
                            }
                        }
                    }
                    return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
                }
                outcomes.merge(wave, uniquingKeysWith: +)
            }
            print("curl cancellation storm:", outcomes)
            #expect(outcomes.values.reduce(0, +) == 10_000)
            #expect(Set(outcomes.keys).isSubset(of: ["success", "cancelled"]), "\(outcomes)")
            #expect(outcomes["success", default: 0] > 0 && outcomes["cancelled", default: 0] > 0)
            #expect(try await client?.send(Endpoint<Int>.get("item")) == 0, "the transport still works")
            var settled = false
            for _ in 0..<200 where !settled {
                settled = transport?.activeTransferCount == 0
                if !settled { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(settled, "libcurl holds \(transport?.activeTransferCount ?? -1) handles")
            client = nil
            transport = nil
            server.stop()
            var after = Self.openDescriptors()
            for _ in 0..<200 where after > before + 4 {
                try await Task.sleep(for: .milliseconds(10))
                after = Self.openDescriptors()
            }
            #expect(after <= before + 4, "descriptors: \(before) before, \(after) after")
        }
    }
#endif
