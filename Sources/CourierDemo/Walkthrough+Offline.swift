import Courier
import CourierTesting
import Foundation

extension Walkthrough {
    /// Step 9: reachability — this machine's status, failing fast and waiting while offline.
    func offline() async {
        heading("9. Reachability: fail fast or wait while offline")
        let system = SystemReachability.shared
        var updates = system.statusUpdates().makeAsyncIterator()
        var status = await updates.next() ?? .unknown
        if status == .unknown { status = await updates.next() ?? .unknown }
        print("   this machine (kernel routing events): \(status)")

        // A simulated outage for a remote backend: the transport is in memory, so nothing leaves
        // this machine; the loopback demo backend is always reachable and would not show it.
        let network = ManualReachability(.offline)
        let transport = MockTransport { _ in .json(#"{"code":0,"msg":"ok","data":"delivered"}"#) }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!, transport: transport)
        configuration.reachability = network
        await step {
            _ = try await NetworkClient(configuration: configuration).send(Endpoint<String>.get("inbox"))
        }
        configuration.reachabilityPolicy = .waitForConnectivity(timeout: .seconds(5))
        let waiting = NetworkClient(configuration: configuration)
        await step {
            let request = Task { try await waiting.send(Endpoint<String>.get("inbox")) }
            print("   waiting for connectivity… (status: \(waiting.reachabilityStatus))")
            try await Task.sleep(for: .milliseconds(300))
            network.set(.online(.wifi))
            print(
                "   back \(waiting.reachabilityStatus) → \(try await request.value); sent \(transport.requests.count) request"
            )
        }
    }
}
