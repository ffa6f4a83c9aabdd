import CourierTesting
import Foundation
import Testing

@testable import Courier

/// The texts the signpost observer writes on Apple platforms, from real timelines.
@Suite struct SignpostTextTests {
    @Test("a request's signposts name it, then give its outcome, measures, cache use and waits")
    func texts() async throws {
        let log = ObserverLog()
        let backend = try Backend {
            $0.observers = [log]
            $0.cache = ResponseCache()
            $0.interceptors = [.retry(.init(maxAttempts: 2, baseDelay: .milliseconds(5), maxDelay: .milliseconds(5)))]
        }
        defer { backend.server.stop() }
        let count = Counter()
        backend.server.route("/v1/n") { _ in count.increment() < 2 ? .init(status: 503) : .envelope(data: "ok") }
        let endpoint = Endpoint<String>.get("n", query: ["token": "canary-77"]).caching(
            .cacheFirst(maxAge: .seconds(9)))
        _ = try await backend.client.send(endpoint)

        let timeline = try #require(log.timelines.first)
        #expect(SignpostText.began(timeline.request).hasPrefix("GET http://127.0.0.1:"))
        #expect(SignpostText.began(timeline.request).hasSuffix("/v1/n?token=\(Redactor.placeholder)"))
        let attempts = timeline.attempts.map(SignpostText.ended)
        #expect(attempts.count == 2)
        #expect(attempts.first?.hasPrefix("attempt 1 (first): 503 · dns ") == true)
        #expect(attempts.last?.hasPrefix("attempt 2 (retry): 200 · ") == true)
        let ended = SignpostText.ended(timeline)
        #expect(
            ended.hasPrefix("200 in ") && ended.contains(" ms · cache miss · shared started · waited retryDelay "),
            "\(ended)")
        #expect(!ended.contains("canary-77"))
        #expect(Duration.milliseconds(3.1).millisecondsText == "3.10 ms")
        #expect(Duration.microseconds(4).millisecondsText == "0.00 ms" && Duration.zero.millisecondsText == "0 ms")
    }
}
