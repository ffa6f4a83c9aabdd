/// Who renews the credential, and when, as a value: events in, steps out, no task, lock or
/// clock. The ``Session`` holds one under its lock and does what it says; tests drive it
/// directly, through every order of events.
///
/// One renewal (a refresh, or a silent login) runs at a time for every request that needs one;
/// the others wait for it. A request that comes after a renewal it did not see uses the
/// credential signed in now. Refreshes and logins are limited in number within a window, and a
/// login that asks while a refresh runs waits for it, then decides again. `Outcome` is what
/// waiters wait on and `Work` what runs the renewal; tests use plain values for both.
struct RenewalState<Outcome, Work> {
    /// The counts a request takes with the credential it sends, to tell later whether the
    /// credential was renewed (or a login succeeded) since.
    struct Mark: Equatable, Sendable {
        var version: UInt64 = 0
        var logIns: UInt64 = 0
    }

    /// What a renewal is for.
    enum Need: Sendable {
        case refresh
        case logIn
    }

    /// How many renewals may start within the window: the session's ``Session/Limits/refreshes``,
    /// ``Session/Limits/logIns`` and ``Session/Limits/window``.
    typealias Limits = Session.Limits

    /// One renewal.
    struct ID: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    /// What a request that needs a renewal does now.
    enum Step {
        /// Send with the credential signed in now: it was renewed since the request sent its own.
        case useSignedIn
        /// Wait for the renewal under way.
        case wait(Outcome)
        /// Wait for the refresh under way, then ask again (a login may still be needed).
        case waitThenDecide(Outcome)
        /// Start the renewal, then tell ``began(_:work:)``.
        case start(ID, Outcome)
        /// Fail: the refreshes within the window reached their limit.
        case tooManyRefreshes
        /// End the session: the logins within the window reached their limit.
        case tooManyLogIns
    }

    fileprivate struct Running {
        let id: ID
        let isLogIn: Bool
        let outcome: Outcome
        var work: Work?
    }

    /// The counts of the credential signed in now.
    private(set) var mark = Mark()
    /// Renewals started and not yet ended (from the step that starts one to ``ended(_:)``),
    /// whatever epoch they began in.
    private(set) var renewalsRunning = 0
    private var running: Running?
    private var refreshStarts: [ContinuousClock.Instant] = []
    private var logInStarts: [ContinuousClock.Instant] = []
    private var nextNumber: UInt64 = 0

    /// Whether a renewal of the current epoch is under way.
    var isRenewing: Bool { running != nil }

    /// The step for a request that sent the credential `sent` and needs `need`.
    /// - Parameters:
    ///   - sent: The counts of the credential the request sent.
    ///   - need: A refresh or a login.
    ///   - signedInIsExpiring: Whether the credential signed in now is about to expire (a
    ///     refresh renewed since is not used then).
    ///   - now: The time, for the limits' window.
    ///   - limits: The limits.
    ///   - make: Makes the outcome of a renewal this request starts.
    mutating func next(
        after sent: Mark, for need: Need, signedInIsExpiring: Bool, now: ContinuousClock.Instant, limits: Limits,
        make: () -> Outcome
    ) -> Step {
        switch need {
        case .refresh:
            if mark.version != sent.version, !signedInIsExpiring { return .useSignedIn }
            if let running { return .wait(running.outcome) }
            refreshStarts.removeAll { now - $0 > limits.window }
            guard refreshStarts.count < limits.refreshes else { return .tooManyRefreshes }
            refreshStarts.append(now)
        case .logIn:
            if mark.logIns != sent.logIns { return .useSignedIn }
            if let running { return running.isLogIn ? .wait(running.outcome) : .waitThenDecide(running.outcome) }
            guard admitLogIn(at: now, limits: limits) else { return .tooManyLogIns }
        }
        nextNumber &+= 1
        let id = ID(number: nextNumber)
        let outcome = make()
        running = Running(id: id, isLogIn: need == .logIn, outcome: outcome)
        renewalsRunning += 1
        return .start(id, outcome)
    }

    /// Counts a silent login starting `now` (a refresh the backend answered with a log-in code
    /// turns into one), unless the limit is reached.
    mutating func admitLogIn(at now: ContinuousClock.Instant, limits: Limits) -> Bool {
        logInStarts.removeAll { now - $0 > limits.window }
        guard logInStarts.count < limits.logIns else { return false }
        logInStarts.append(now)
        return true
    }

    /// A login that started at `started` was cancelled: it does not count against the limit.
    mutating func logInCancelled(startedAt started: ContinuousClock.Instant) {
        if let index = logInStarts.firstIndex(of: started) { logInStarts.remove(at: index) }
    }

    /// The renewal `id` has its work.
    /// - Returns: Whether it is still the current one; when not (its epoch ended first, or the
    ///   work ended already), stop the work (which does nothing to work that ended).
    mutating func began(_ id: ID, work: Work) -> Bool {
        guard running?.id == id else { return false }
        running?.work = work
        return true
    }

    /// The renewal `id`'s work ended: later requests start a new one.
    mutating func ended(_ id: ID) {
        if running?.id == id { running = nil }
        renewalsRunning -= 1
    }

    /// Another credential is signed in, in the same epoch: renewed by a refresh, or by a login
    /// (`isLogIn`), or read from the store.
    /// - Returns: Its counts.
    mutating func changed(isLogIn: Bool) -> Mark {
        mark.version += 1
        if isLogIn { mark.logIns += 1 }
        return mark
    }

    /// The epoch ended (a logout, a login as someone else, the backend's end of the session):
    /// no request of the next one joins the renewal under way.
    /// - Returns: The renewal's work, to stop.
    mutating func epochEnded() -> Work? {
        mark.version += 1
        defer { running = nil }
        return running?.work
    }
}

extension RenewalState: Sendable where Outcome: Sendable, Work: Sendable {}
extension RenewalState.Step: Sendable where Outcome: Sendable {}
extension RenewalState.Running: Sendable where Outcome: Sendable, Work: Sendable {}
