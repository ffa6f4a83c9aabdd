import CourierTesting
import Foundation
import Testing

@testable import Courier

/// The retry layer over loopback; the server counts the attempts.
@Suite struct RetryTests {
    private static let fast = RetryInterceptor.Policy(
        maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(50))

    private func backend(_ policy: RetryInterceptor.Policy = fast, status: Int, headers: HTTPHeaders = [:]) throws
        -> Backend
    {
        let backend = try Backend {
            $0.interceptors = [.retry(policy), .signing(.hmacSHA256(secret: Data("k".utf8)))]
        }
        backend.server.route("/v1/r") { _ in .init(status: status, headers: headers) }
        return backend
    }

    private func attempts(_ backend: Backend) -> Int { backend.server.requests.count }

    @Test(
        "retryable statuses are retried up to the limit for idempotent methods", arguments: [408, 429, 502, 503, 504])
    func retryable(_ status: Int) async throws {
        let backend = try backend(status: status)
        defer { backend.server.stop() }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("r")) }
        #expect(error?.status == status)
        #expect(attempts(backend) == 3)
        #expect(
            Set(backend.server.requests.compactMap { $0.query["nonce"] }).count == 3, "each attempt is signed afresh")
    }

    @Test("other statuses are not retried", arguments: [400, 401, 404, 500])
    func notRetryable(_ status: Int) async throws {
        let backend = try backend(status: status)
        defer { backend.server.stop() }
        _ = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("r")) }
        #expect(attempts(backend) == 1)
    }

    @Test("a POST is sent exactly once unless the endpoint opts in")
    func postOnce() async throws {
        let backend = try backend(status: 503)
        defer { backend.server.stop() }
        _ = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.post("r")) }
        #expect(attempts(backend) == 1)
        _ = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.post("r").idempotent()) }
        #expect(attempts(backend) == 4)
    }

    @Test("a success after failures is returned")
    func recovers() async throws {
        let backend = try Backend { $0.interceptors = [.retry(Self.fast)] }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/r") { _ in
            count.increment() < 3
                ? LoopbackServer.Response.json("{}").with(.closeBeforeResponding) : .envelope(data: "third")
        }
        #expect(try await backend.client.send(Endpoint<String>.get("r")) == "third")
        #expect(attempts(backend) == 3)
    }

    @Test("Retry-After is honoured, and one beyond the cap ends the retries")
    func retryAfter() async throws {
        let policy = RetryInterceptor.Policy(maxAttempts: 2, maxRetryAfter: .seconds(2))
        let honoured = try backend(policy, status: 503, headers: ["Retry-After": "1"])
        defer { honoured.server.stop() }
        let start = ContinuousClock.now
        _ = await networkError { _ = try await honoured.client.send(Endpoint<EmptyResponse>.get("r")) }
        #expect(ContinuousClock.now - start >= .milliseconds(950))
        #expect(attempts(honoured) == 2)

        let capped = try backend(policy, status: 429, headers: ["Retry-After": "120"])
        defer { capped.server.stop() }
        let error = await networkError { _ = try await capped.client.send(Endpoint<EmptyResponse>.get("r")) }
        #expect(error?.status == 429)
        #expect(attempts(capped) == 1)
    }

    @Test("cancelling during a backoff wait ends it at once, with no further attempt")
    func cancelDuringBackoff() async throws {
        let policy = RetryInterceptor.Policy(maxAttempts: 3, maxRetryAfter: .seconds(60))
        let backend = try backend(policy, status: 503, headers: ["Retry-After": "30"])
        defer { backend.server.stop() }
        let task = Task { try await backend.client.send(Endpoint<EmptyResponse>.get("r")) }
        #expect(await backend.server.waitForEvents { $0.contains { if case .answered = $0 { true } else { false } } })
        let start = ContinuousClock.now
        task.cancel()
        let error = await networkError { _ = try await task.value }
        #expect(error?.code == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(10), "long before the 30 s Retry-After")
        #expect(attempts(backend) == 1)
    }

    @Test("Retry-After accepts seconds and HTTP dates")
    func retryAfterParsing() {
        #expect(RetryInterceptor.seconds(inRetryAfter: "7") == .seconds(7))
        #expect(RetryInterceptor.seconds(inRetryAfter: "-1") == nil)
        #expect(RetryInterceptor.seconds(inRetryAfter: "Wed, 21 Oct 2015 07:28:00 GMT") == .zero)
        #expect(RetryInterceptor.seconds(inRetryAfter: "soon") == nil)
        // The other two forms a recipient must read, here dates far ahead.
        for later in ["Sat Nov  6 08:49:37 2094", "Thursday, 06-Nov-70 08:49:37 GMT"] {
            let wait = RetryInterceptor.seconds(inRetryAfter: later)
            #expect(wait.map { $0 > .seconds(3_600) } == true, "\(later)")
        }
    }
}
