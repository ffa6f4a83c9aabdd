import Foundation

/// What `SignpostObserver` writes in each signpost, apart from the signposts themselves so the
/// Linux tests read it: the request's method and URL (secrets hidden) as an interval begins,
/// and the outcome and measures as it ends.
enum SignpostText {
    /// `GET https://api.example.com/v1/orders?page=1`.
    static func began(_ request: ObservedRequest) -> String { request.description }

    /// `attempt 2 (retry): 200 · dns 0.05 ms, …`, or the failure's code.
    static func ended(_ attempt: RequestTimeline.Attempt) -> String {
        let outcome = attempt.failure.map { $0.rawValue } ?? attempt.status.map(String.init) ?? "no answer"
        return "attempt \(attempt.number) (\(attempt.reason.rawValue)): \(outcome) · \(attempt.phases)"
    }

    /// `200 in 12.40 ms · cache hit · shared started · waited tokenRefresh 3.10 ms`.
    static func ended(_ timeline: RequestTimeline) -> String {
        var parts = [
            "\(timeline.failure.map { $0.rawValue } ?? timeline.status.map(String.init) ?? "no answer") in \(timeline.total.millisecondsText)"
        ]
        if let cache = timeline.cache { parts.append("cache \(cache.rawValue)") }
        if let shared = timeline.sharedTransfer { parts.append("shared \(shared.rawValue)") }
        for wait in timeline.waits { parts.append("waited \(wait.kind.rawValue) \(wait.duration.millisecondsText)") }
        return parts.joined(separator: " · ")
    }
}
