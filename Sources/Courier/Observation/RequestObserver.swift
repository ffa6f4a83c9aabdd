import Foundation

/// Watches every request of a client: when it starts, each attempt, and its
/// ``RequestTimeline`` when it ends. Install observers with
/// ``NetworkClient/Configuration/observers``; with none, the client records nothing.
///
/// ```swift
/// struct SlowRequests: RequestObserver {
///     func requestEnded(_ timeline: RequestTimeline) {
///         if timeline.total > .seconds(2) { print("slow:", timeline.request.url, timeline.waits) }
///     }
/// }
/// ```
///
/// Every method has a default that does nothing. They are called as it happens, on the task
/// doing that step (the caller's, or the one the request is sent in): keep them short, and hand
/// anything slow (a file, a tracer's exporter) to a queue of your own. What they get has its
/// secrets hidden: the URL and headers are redacted, and no body is shown.
public protocol RequestObserver: Sendable {
    /// A request began (before any wait or attempt).
    /// - Parameter request: The request as its endpoint built it.
    func requestStarted(_ request: ObservedRequest)

    /// An attempt is about to go to the transport.
    /// - Parameters:
    ///   - number: 1 for the first.
    ///   - request: The request as it goes (token, signature, `traceparent`).
    func attemptStarted(_ number: Int, request: ObservedRequest)

    /// An attempt ended, with an answer or an error.
    /// - Parameters:
    ///   - attempt: What it took.
    ///   - request: The request it belongs to, as its endpoint built it.
    func attemptEnded(_ attempt: RequestTimeline.Attempt, of request: ObservedRequest)

    /// A request ended: answered, failed or cancelled.
    /// - Parameter timeline: Where its time went.
    func requestEnded(_ timeline: RequestTimeline)
}

extension RequestObserver {
    /// Does nothing.
    /// - Parameter request: Not used.
    public func requestStarted(_ request: ObservedRequest) {}

    /// Does nothing.
    /// - Parameters:
    ///   - number: Not used.
    ///   - request: Not used.
    public func attemptStarted(_ number: Int, request: ObservedRequest) {}

    /// Does nothing.
    /// - Parameters:
    ///   - attempt: Not used.
    ///   - request: Not used.
    public func attemptEnded(_ attempt: RequestTimeline.Attempt, of request: ObservedRequest) {}

    /// Does nothing.
    /// - Parameter timeline: Not used.
    public func requestEnded(_ timeline: RequestTimeline) {}
}
