#if canImport(os)
    import Foundation
    import os

    /// Shows every request in Instruments (the Points of Interest and os_signpost instruments):
    /// an interval per request, labelled with its method and URL (secrets hidden; private
    /// outside a debugging session) and ended with its outcome, cache use and waits; and an
    /// interval per attempt, ended with its outcome and the phases its transport measured
    /// (they are known only once it ends).
    ///
    /// ```swift
    /// configuration.observers.append(SignpostObserver())
    /// ```
    ///
    /// (Not compiled on Linux; the texts it writes are built by code the Linux tests check.)
    public final class SignpostObserver: RequestObserver, @unchecked Sendable {
        // `@unchecked Sendable`: `open` is guarded by `lock`; OSSignposter is thread-safe.
        private let signposter: OSSignposter
        private let lock = NSLock()
        private var open: [UInt64: Intervals] = [:]

        private struct Intervals {
            let id: OSSignpostID
            let request: OSSignpostIntervalState
            var attempt: OSSignpostIntervalState?
        }

        /// Creates the observer.
        /// - Parameter subsystem: The signposts' subsystem, usually the app's bundle
        ///   identifier; their category is Points of Interest.
        public init(subsystem: String = "Courier") {
            signposter = OSSignposter(logHandle: OSLog(subsystem: subsystem, category: .pointsOfInterest))
        }

        /// Begins the request's interval.
        /// - Parameter request: The request.
        public func requestStarted(_ request: ObservedRequest) {
            let id = signposter.makeSignpostID()
            let state = signposter.beginInterval(
                "Request", id: id, "\(SignpostText.began(request), privacy: .private)")
            lock.withLock { open[request.id] = Intervals(id: id, request: state) }
        }

        /// Begins the attempt's interval.
        /// - Parameters:
        ///   - number: The attempt's number.
        ///   - request: The request as it goes.
        public func attemptStarted(_ number: Int, request: ObservedRequest) {
            guard let id = lock.withLock({ open[request.id]?.id }) else { return }
            let state = signposter.beginInterval("Attempt", id: id, "attempt \(number, privacy: .public)")
            lock.withLock { open[request.id]?.attempt = state }
        }

        /// Ends the attempt's interval, and marks its phases.
        /// - Parameters:
        ///   - attempt: The attempt.
        ///   - request: The request.
        public func attemptEnded(_ attempt: RequestTimeline.Attempt, of request: ObservedRequest) {
            let intervals = lock.withLock { () -> Intervals? in
                let intervals = open[request.id]
                open[request.id]?.attempt = nil
                return intervals
            }
            guard let intervals else { return }
            let text = SignpostText.ended(attempt)
            if let state = intervals.attempt {
                signposter.endInterval("Attempt", state, "\(text, privacy: .public)")
            } else {
                signposter.emitEvent("Attempt", id: intervals.id, "\(text, privacy: .public)")
            }
        }

        /// Ends the request's interval with its outcome, cache use and waits.
        /// - Parameter timeline: The request's timeline.
        public func requestEnded(_ timeline: RequestTimeline) {
            guard let intervals = lock.withLock({ open.removeValue(forKey: timeline.request.id) }) else { return }
            if let attempt = intervals.attempt { signposter.endInterval("Attempt", attempt, "not ended") }
            signposter.endInterval(
                "Request", intervals.request, "\(SignpostText.ended(timeline), privacy: .public)")
        }
    }
#endif
