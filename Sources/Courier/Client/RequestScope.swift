/// A request from the moment it begins until it ends: registered in flight (so
/// ``NetworkClient/cancelAll()`` reaches it at once, whatever it waits for), and bound to the
/// session epoch it began in. Every step that leads to a send or a store checks it.
struct RequestScope: Sendable {
    let epoch: SessionEpoch
    let entry: InFlightRegistry.Entry

    /// Throws once the session left the request's epoch (``NetworkError/Code/sessionExpired``
    /// when the backend ended it, ``NetworkError/Code/cancelled`` otherwise), or the request was
    /// cancelled. The epoch comes first: the end of an epoch cancels its requests too, and they
    /// fail with the end's error.
    /// - Parameter step: What the request was doing, for the message: "the cache was read".
    func check(_ step: @autoclosure () -> String) throws(NetworkError) {
        if entry.epoch != epoch.number { throw epoch.session.endError(of: entry.epoch, while: step()) }
        try epoch.check(step())
        guard !entry.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled (cancelAll()) while \(step()).")
        }
    }
}
