import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Scenarios {
    /// S19: what `URLSessionTransport` costs above the session delegate it needs. The transport
    /// with JSONDecoder and no client (as the S1 floor rows), against a bare delegate bridge with
    /// no logic on the same session configuration and the same kind of delegate queue:
    /// sequential GETs (in alternating blocks, as S3 and S16) and 64 at once. The client on
    /// URLSessionTransport is shown against the bridge too, without a target (its pipeline is
    /// what S1 against S1-floor measures).
    func s19Bridge() async throws -> [Measurement] {
        let sequential = quick ? 300 : 2000
        let concurrent = quick ? 640 : 4096
        let bridge = DelegateBridge()
        defer { bridge.invalidate() }
        let bridgeOrders = { @Sendable [ordersURL] in
            let data = try await bridge.data(from: ordersURL)
            _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data)
        }
        let transportOrders = { @Sendable in _ = try await self.transportOrders(.urlSession) }
        let clientOrders = { @Sendable in _ = try await self.courierOrders(self.sessionClient) }
        let one = try await Harness.alternated(
            repetitions: repetitions, count: sequential, block: 100,
            warmUp: {
                for _ in 0..<100 {
                    try await transportOrders()
                    try await bridgeOrders()
                    try await clientOrders()
                }
            },
            senders: [transportOrders, bridgeOrders, clientOrders])
        let many = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                // Each side's connections open before any clock starts.
                _ = try await Harness.rate(count: 640, concurrency: 64) { try await transportOrders() }
                _ = try await Harness.rate(count: 640, concurrency: 64) { try await bridgeOrders() }
            },
            runs: [
                { try await Harness.rate(count: concurrent, concurrency: 64) { try await transportOrders() } },
                { try await Harness.rate(count: concurrent, concurrency: 64) { try await bridgeOrders() } },
            ])
        let against = "against a bare session-delegate bridge"
        return [
            .ratio(
                "S19-seq",
                "\(sequential) sequential GETs, 1 KB envelope — URLSessionTransport + JSONDecoder, \(against)",
                unit: "req/s", courier: one[0], baseline: one[1], higherIsBetter: true, minimum: 0.95),
            .ratio(
                "S19-client-seq", "the same — NetworkClient on URLSessionTransport, \(against)", unit: "req/s",
                courier: one[2], baseline: one[1], higherIsBetter: true, minimum: nil),
            .ratio(
                "S19-64", "\(concurrent) GETs from 64 concurrent tasks — URLSessionTransport + JSONDecoder, \(against)",
                unit: "req/s", courier: many[0], baseline: many[1], higherIsBetter: true, minimum: 0.95),
        ]
    }
}

/// The least a session delegate must do to answer `async` callers: keep each task's bytes and
/// resume its caller when it completes. No cancellation, redirects, limits or checks; the same
/// session configuration as `URLSessionTransport`'s default, and the same kind of delegate
/// queue: on Linux one that runs each callback at once on FoundationNetworking's thread (a queue
/// of threads would add a thread switch per callback), elsewhere a serial `OperationQueue`.
///
/// `@unchecked Sendable`: `tasks` is guarded by `lock`.
private final class DelegateBridge: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Int: (continuation: CheckedContinuation<Data, any Error>, data: Data)] = [:]
    private var session: URLSession!

    override init() {
        super.init()
        #if canImport(FoundationNetworking)
            let queue: OperationQueue = InlineQueue()
        #else
            let queue = OperationQueue()
        #endif
        queue.maxConcurrentOperationCount = 1
        session = URLSession(
            configuration: URLSessionTransport.defaultSessionConfiguration(), delegate: self, delegateQueue: queue)
    }

    func invalidate() { session.finishTasksAndInvalidate() }

    func data(from url: URL) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: url)
            lock.withLock { tasks[task.taskIdentifier] = (continuation, Data()) }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { tasks[dataTask.taskIdentifier]?.data.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let ended = lock.withLock({ tasks.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let error {
            ended.continuation.resume(throwing: error)
        } else {
            ended.continuation.resume(returning: ended.data)
        }
    }
}

#if canImport(FoundationNetworking)
    /// Runs each block at once on the thread that adds it; the bridge's callbacks never call
    /// into a task or the session, so nothing waits for itself.
    private final class InlineQueue: OperationQueue, @unchecked Sendable {
        override func addOperation(_ block: @escaping @Sendable () -> Void) { block() }
    }
#endif
