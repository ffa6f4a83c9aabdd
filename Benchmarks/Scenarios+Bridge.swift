import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Scenarios {
    /// S19: what `URLSessionTransport` costs above the session delegate it needs. The transport
    /// with JSONDecoder and no client (as the S1 floor rows), against a bare delegate bridge with
    /// no logic and the same session configuration: sequential GETs and 64 at once.
    func s19Bridge() async throws -> [Measurement] {
        let sequential = quick ? 300 : 2000
        let concurrent = quick ? 640 : 4096
        let bridge = DelegateBridge()
        defer { bridge.invalidate() }
        let bridgeOrders = { @Sendable [ordersURL] in
            let data = try await bridge.data(from: ordersURL)
            _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data)
        }
        let medians = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                for _ in 0..<100 {
                    _ = try await transportOrders(.urlSession)
                    try await bridgeOrders()
                }
            },
            runs: [
                {
                    try await Harness.rate(count: sequential, concurrency: 1) {
                        _ = try await self.transportOrders(.urlSession)
                    }
                },
                { try await Harness.rate(count: sequential, concurrency: 1) { try await bridgeOrders() } },
                {
                    try await Harness.rate(count: concurrent, concurrency: 64) {
                        _ = try await self.transportOrders(.urlSession)
                    }
                },
                { try await Harness.rate(count: concurrent, concurrency: 64) { try await bridgeOrders() } },
            ])
        let against = "URLSessionTransport + JSONDecoder, no client, against a bare session-delegate bridge"
        return [
            .ratio(
                "S19-seq", "\(sequential) sequential GETs, 1 KB envelope — \(against)", unit: "req/s",
                courier: medians[0], baseline: medians[1], higherIsBetter: true, minimum: 0.95),
            .ratio(
                "S19-64", "\(concurrent) GETs from 64 concurrent tasks — \(against)", unit: "req/s",
                courier: medians[2], baseline: medians[3], higherIsBetter: true, minimum: 0.95),
        ]
    }
}

/// The least a session delegate must do to answer `async` callers: keep each task's bytes and
/// resume its caller when it completes. No cancellation, redirects, limits or checks; the same
/// session configuration as `URLSessionTransport`'s default, and a serial delegate queue made
/// by the session.
///
/// `@unchecked Sendable`: `tasks` is guarded by `lock`.
private final class DelegateBridge: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Int: (continuation: CheckedContinuation<Data, any Error>, data: Data)] = [:]
    private var session: URLSession!

    override init() {
        super.init()
        session = URLSession(
            configuration: URLSessionTransport.defaultSessionConfiguration(), delegate: self, delegateQueue: nil)
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
