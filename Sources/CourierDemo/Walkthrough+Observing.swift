import Courier
import CourierTesting
import Foundation

extension Walkthrough {
    /// Keeps the timelines the client hands on, for the demo to print.
    private final class KeptTimelines: RequestObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [RequestTimeline] = []
        func requestEnded(_ timeline: RequestTimeline) { lock.withLock { kept.append(timeline) } }
        var all: [RequestTimeline] { lock.withLock { kept } }
    }

    /// Step 15: where a request's time went, and one W3C trace across its attempts.
    func observing() async {
        heading("15. Observing requests: a timeline per request, a traceparent per attempt")
        await step {
            let kept = KeptTimelines()
            let session = Session(placement: .bearer)
            try await session.logIn(Credential(accessToken: "demo-token-77a1c3"))
            var configuration = NetworkClient.Configuration(baseURL: client.configuration.baseURL, session: session)
            configuration.observers = [kept]
            configuration.interceptors = [.traceContext(), .retry()]
            let observed = NetworkClient(configuration: configuration)
            _ = try await observed.send(.orders(page: 1))
            _ = try await observed.send(.orders(page: 2))
            for timeline in kept.all {
                print(
                    "   \(timeline.request) → \(timeline.status.map(String.init) ?? "-") in \(Int(timeline.total / .microseconds(1))) µs"
                )
                for attempt in timeline.attempts {
                    print(
                        "     attempt \(attempt.number) (\(attempt.reason.rawValue)), reused connection: "
                            + "\(attempt.connection.isReused.map(String.init) ?? "not measured")")
                    print("       \(attempt.phases)")
                    print("       traceparent \(attempt.traceParent ?? "-")")
                }
            }
            let tokenShown = kept.all.contains {
                "\($0.request.headers) \($0.attempts.map(\.request.headers))".contains("demo-token")
            }
            print("   the token reached the observer: \(tokenShown)")
        }
    }
}
