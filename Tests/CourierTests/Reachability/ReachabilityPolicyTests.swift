import Courier
import CourierTesting
import Foundation
import Testing

/// The client's reachability policy with a monitor set by hand. The transport is in memory, so
/// nothing leaves the machine whatever the base URL.
@Suite struct ReachabilityPolicyTests {
    /// A monitor set by hand that counts the requests that began waiting for it (each waits on
    /// a stream of its own), so a test can act once they wait instead of after a guessed time.
    final class WatchedReachability: ReachabilityMonitor {
        let manual: ManualReachability
        let waiting = Counter()

        init(_ status: ReachabilityStatus) { manual = ManualReachability(status) }

        var status: ReachabilityStatus { manual.status }

        func statusUpdates() -> AsyncStream<ReachabilityStatus> {
            _ = waiting.increment()
            return manual.statusUpdates()
        }

        /// Whether `count` requests wait (checked every 5 ms; the limit only ends a wait for
        /// requests that never do).
        func waits(_ count: Int) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
            while waiting.current < count, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return waiting.current >= count
        }
    }

    private func client(_ monitor: any ReachabilityMonitor, _ policy: ReachabilityPolicy) -> (
        NetworkClient, MockTransport
    ) {
        let transport = MockTransport { _ in .json(#"{"code":0,"data":"sent"}"#) }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!, transport: transport)
        configuration.reachability = monitor
        configuration.reachabilityPolicy = policy
        return (NetworkClient(configuration: configuration), transport)
    }

    @Test("offline with fail-fast throws offline without touching the wire")
    func failFast() async throws {
        let (client, transport) = client(ManualReachability(.offline), .failFast)
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("a")) }
        #expect(error?.code == .offline)
        #expect(transport.requests.isEmpty)
    }

    @Test("unknown and online never block", arguments: [ReachabilityStatus.unknown, .online(.wifi)])
    func notBlocking(_ status: ReachabilityStatus) async throws {
        let (client, transport) = client(ManualReachability(status), .failFast)
        #expect(try await client.send(Endpoint<String>.get("a")) == "sent")
        #expect(transport.requests.count == 1)
    }

    @Test("waiting for connectivity sends the request once the status flips to online")
    func waitThenSend() async throws {
        let monitor = WatchedReachability(.offline)
        let (client, transport) = client(monitor, .waitForConnectivity(timeout: .seconds(60) * TestTiming.scale))
        let task = Task { try await client.send(Endpoint<String>.get("a")) }
        #expect(await monitor.waits(1))
        #expect(transport.requests.isEmpty)
        monitor.manual.set(.online(.wired))
        #expect(try await task.value == "sent")
        #expect(transport.requests.count == 1)
    }

    @Test("waiting times out with offline and sends nothing")
    func waitTimesOut() async throws {
        let (client, transport) = client(
            ManualReachability(.offline), .waitForConnectivity(timeout: .milliseconds(200)))
        let start = ContinuousClock.now
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("a")) }
        #expect(error?.code == .offline)
        #expect(ContinuousClock.now - start >= .milliseconds(190))
        #expect(transport.requests.isEmpty)
    }

    @Test("cancellation ends the wait at once, and cancelAll reaches waiting requests")
    func cancelWhileWaiting() async throws {
        let monitor = WatchedReachability(.offline)
        let (client, transport) = client(monitor, .waitForConnectivity(timeout: .seconds(60)))
        let task = Task { try await client.send(Endpoint<String>.get("a")) }
        let other = Task { try await client.send(Endpoint<String>.get("b")) }
        // Both wait for connectivity before either is cancelled.
        #expect(await monitor.waits(2))
        let start = ContinuousClock.now
        task.cancel()
        #expect(await networkError { _ = try await task.value }?.code == .cancelled)
        client.cancelAll()
        #expect(await networkError { _ = try await other.value }?.code == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(20), "long before the 60 s wait would end")
        #expect(transport.requests.isEmpty)
    }

    @Test("loopback hosts are always reachable")
    func loopback() async throws {
        let backend = try Backend {
            $0.reachability = ManualReachability(.offline)
            $0.reachabilityPolicy = .failFast
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .envelope(data: "local") }
        #expect(try await backend.client.send(Endpoint<String>.get("a")) == "local")
    }

    @Test("a monitor that gates loopback too: online, then offline, against a loopback server")
    func gatedLoopback() async throws {
        let reachability = ManualReachability(.online(.wifi), gatesLoopback: true)
        let backend = try Backend {
            $0.reachability = reachability
            $0.reachabilityPolicy = .failFast
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .envelope(data: "local") }

        let online = try await backend.client.send(Endpoint<String>.get("a"))
        reachability.set(.offline)
        let offline = await networkError { _ = try await backend.client.send(Endpoint<String>.get("a")) }

        #expect(online == "local")
        #expect(offline?.code == .offline)
        #expect(backend.server.requests.count == 1)
    }

    @Test(
        "a host name that only looks like loopback is not always reachable",
        arguments: ["127.example.com", "127.0.0.1.example.com", "127.0.0", "localhost.example.com", "127.0.0.256"])
    func lookalikeIsNotLoopback(_ host: String) async throws {
        let transport = MockTransport { _ in .json(#"{"code":0,"data":"sent"}"#) }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://\(host)/")!, transport: transport)
        configuration.reachability = ManualReachability(.offline)
        let error = await networkError {
            _ = try await NetworkClient(configuration: configuration).send(Endpoint<String>.get("a"))
        }
        #expect(error?.code == .offline)
        #expect(transport.requests.isEmpty)
    }

    @Test("every loopback spelling is always reachable", arguments: ["127.0.0.1", "127.1.2.3", "localhost", "[::1]"])
    func loopbackSpellings(_ host: String) async throws {
        let transport = MockTransport { _ in .json(#"{"code":0,"data":"sent"}"#) }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "http://\(host):8080/")!, transport: transport)
        configuration.reachability = ManualReachability(.offline)
        #expect(try await NetworkClient(configuration: configuration).send(Endpoint<String>.get("a")) == "sent")
    }

    @Test("a transport failure while the monitor says online is reported as a transport failure")
    func transportFailureIsNotOffline() async throws {
        let refusing = RefusingPort()
        var configuration = NetworkClient.Configuration(baseURL: URL(string: "http://127.0.0.1:\(refusing.port)/")!)
        configuration.reachability = ManualReachability(.online(.wired))
        let error = await networkError {
            _ = try await NetworkClient(configuration: configuration).send(Endpoint<String>.get("a"))
        }
        #expect(error?.code == .transport)
    }

    @Test("the client shows the monitor's status and its changes")
    func exposesStatus() async throws {
        let monitor = ManualReachability(.offline)
        let (client, _) = client(monitor, .failFast)
        #expect(client.reachabilityStatus == .offline)
        var updates = client.reachabilityUpdates().makeAsyncIterator()
        #expect(await updates.next() == .offline)
        monitor.set(.online(.cellular))
        #expect(await updates.next() == .online(.cellular))
        #expect(client.reachabilityStatus == .online(.cellular))
    }
}
