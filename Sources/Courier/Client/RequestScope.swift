/// A request from the moment it begins until it ends: registered in flight (so
/// ``NetworkClient/cancelAll()`` reaches it at once, whatever it waits for), and bound to the
/// session epoch it began in. Every step that leads to a send or a store checks it.
struct RequestScope: Sendable {
    let epoch: SessionEpoch
    let entry: InFlightRegistry.Entry

    /// Throws ``NetworkError/Code/cancelled`` once the request was cancelled, or the session
    /// left its epoch (``NetworkError/Code/sessionExpired`` when the backend ended it).
    /// - Parameter step: What the request was doing, for the message: "the cache was read".
    func check(_ step: @autoclosure () -> String) throws(NetworkError) {
        guard !entry.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled (cancelAll()) while \(step()).")
        }
        try epoch.check(step())
    }
}
