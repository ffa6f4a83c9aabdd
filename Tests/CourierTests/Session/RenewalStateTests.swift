import Testing

@testable import Courier

/// Who renews the credential and when, driven directly: each order of events that the session
/// tests reach only over loopback, with gates and timing.
@Suite struct RenewalStateTests {
    /// An outcome is a number; work is a name.
    typealias State = RenewalState<Int, String>

    static let limits = State.Limits(refreshes: 2, logIns: 2, window: .seconds(60))
    static let start = ContinuousClock.now

    static func next(
        _ state: inout State, after sent: State.Mark, _ need: State.Need, expiring: Bool = false,
        at seconds: Int = 0, making outcome: Int = 1
    ) -> State.Step {
        state.next(
            after: sent, for: need, signedInIsExpiring: expiring, now: start + .seconds(seconds), limits: limits,
            make: { outcome })
    }

    /// Starts and ends one renewal of `need` at each of `seconds`.
    static func renewals(_ state: inout State, _ need: State.Need, at seconds: [Int]) throws {
        for second in seconds {
            let (id, _) = try #require(Self.started(Self.next(&state, after: state.mark, need, at: second)))
            state.ended(id)
        }
    }

    /// The renewal a step starts, or `nil`.
    static func started(_ step: State.Step) -> (State.ID, Int)? {
        if case .start(let id, let outcome) = step { return (id, outcome) }
        return nil
    }

    static func waited(_ step: State.Step) -> Int? {
        if case .wait(let outcome) = step { return outcome }
        return nil
    }

    static func name(_ step: State.Step) -> String {
        switch step {
        case .useSignedIn: "use"
        case .wait: "wait"
        case .waitThenDecide: "waitThenDecide"
        case .start: "start"
        case .tooManyRefreshes: "tooManyRefreshes"
        case .tooManyLogIns: "tooManyLogIns"
        }
    }

    @Test("the first request that needs a refresh starts it; the others of its credential wait for it")
    func oneRefresh() throws {
        var state = State()
        let sent = state.mark
        let (id, outcome) = try #require(Self.started(Self.next(&state, after: sent, .refresh, making: 7)))
        #expect(outcome == 7)
        let second = Self.next(&state, after: sent, .refresh, making: 8)
        #expect(Self.waited(second) == 7)
        let begun = state.began(id, work: "refresh")
        #expect(begun)
        #expect(state.renewalsRunning == 1 && state.isRenewing)
    }

    @Test("a request that sent the credential before a renewal uses the new one, unless it is expiring")
    func renewedSince() throws {
        var state = State()
        let sent = state.mark
        let (id, _) = try #require(Self.started(Self.next(&state, after: sent, .refresh)))
        let renewed = state.changed(isLogIn: false)
        state.ended(id)
        #expect(renewed.version == sent.version + 1 && renewed.logIns == sent.logIns)
        let afterRenewal = Self.next(&state, after: sent, .refresh)
        #expect(Self.name(afterRenewal) == "use")
        let expiring = Self.next(&state, after: sent, .refresh, expiring: true)
        #expect(Self.name(expiring) == "start")
        let meanwhile = Self.next(&state, after: state.mark, .refresh)
        #expect(Self.name(meanwhile) == "wait", "that refresh is under way")
    }

    @Test("refreshes past the limit within the window fail; after the window they start again")
    func refreshLimit() throws {
        var state = State()
        try Self.renewals(&state, .refresh, at: [0, 1])
        let third = Self.next(&state, after: state.mark, .refresh, at: 2)
        #expect(Self.name(third) == "tooManyRefreshes")
        #expect(!state.isRenewing, "a refused refresh starts nothing")
        let afterWindow = Self.next(&state, after: state.mark, .refresh, at: 61)
        #expect(Self.name(afterWindow) == "start")
    }

    @Test("a login asked while a refresh runs waits for it and decides again; while a login runs it waits")
    func logInMeetsRenewal() throws {
        var state = State()
        let sent = state.mark
        _ = try #require(Self.started(Self.next(&state, after: sent, .refresh, making: 1)))
        let logInDuringRefresh = Self.next(&state, after: sent, .logIn)
        #expect(Self.name(logInDuringRefresh) == "waitThenDecide")

        var logIns = State()
        _ = try #require(Self.started(Self.next(&logIns, after: sent, .logIn, making: 2)))
        let logInDuringLogIn = Self.next(&logIns, after: sent, .logIn)
        #expect(Self.waited(logInDuringLogIn) == 2)
        let refreshDuringLogIn = Self.next(&logIns, after: sent, .refresh)
        #expect(Self.waited(refreshDuringLogIn) == 2, "a refresh waits for the login too")
    }

    @Test("after a login succeeded, a request that sent the old credential uses the new one; a refresh does not count")
    func logInSince() throws {
        var state = State()
        let sent = state.mark
        let (refresh, _) = try #require(Self.started(Self.next(&state, after: sent, .refresh)))
        _ = state.changed(isLogIn: false)
        state.ended(refresh)
        let logInAfterRefresh = Self.next(&state, after: sent, .logIn)
        #expect(Self.name(logInAfterRefresh) == "start", "a refresh is no login")
        var other = State()
        let (login, _) = try #require(Self.started(Self.next(&other, after: sent, .logIn)))
        _ = other.changed(isLogIn: true)
        other.ended(login)
        let logInAfterLogIn = Self.next(&other, after: sent, .logIn)
        #expect(Self.name(logInAfterLogIn) == "use")
    }

    @Test("logins past the limit end the session; a cancelled one does not count")
    func logInLimit() throws {
        var state = State()
        let (first, _) = try #require(Self.started(Self.next(&state, after: state.mark, .logIn, at: 0)))
        state.ended(first)
        state.logInCancelled(startedAt: Self.start)
        try Self.renewals(&state, .logIn, at: [1, 2])
        let fourth = Self.next(&state, after: state.mark, .logIn, at: 3)
        #expect(Self.name(fourth) == "tooManyLogIns")
        let admittedInWindow = state.admitLogIn(at: Self.start + .seconds(4), limits: Self.limits)
        #expect(!admittedInWindow, "a refresh turned login too")
        let admittedAfterWindow = state.admitLogIn(at: Self.start + .seconds(62), limits: Self.limits)
        #expect(admittedAfterWindow)
    }

    @Test("an epoch's end stops its renewal: the next request starts its own, and the old one's end leaves it")
    func epochEnds() throws {
        var state = State()
        let sent = state.mark
        let (old, _) = try #require(Self.started(Self.next(&state, after: sent, .refresh, making: 1)))
        let begun = state.began(old, work: "old")
        #expect(begun)
        let stopped = state.epochEnded()
        #expect(stopped == "old")
        #expect(state.mark.version == sent.version + 1)
        let (new, outcome) = try #require(Self.started(Self.next(&state, after: state.mark, .refresh, making: 2)))
        #expect(outcome == 2)
        #expect(state.renewalsRunning == 2, "the old one still runs until it ends")
        state.ended(old)
        #expect(state.renewalsRunning == 1)
        let afterOldEnded = Self.next(&state, after: state.mark, .refresh)
        #expect(Self.waited(afterOldEnded) == 2, "the new one stays current")
        state.ended(new)
        #expect(state.renewalsRunning == 0 && !state.isRenewing)
    }

    @Test("a renewal whose epoch ended before its work was known is told to stop it")
    func endedBeforeWork() throws {
        var state = State()
        let (id, _) = try #require(Self.started(Self.next(&state, after: state.mark, .logIn)))
        let stopped = state.epochEnded()
        #expect(stopped == nil)
        let begun = state.began(id, work: "late")
        #expect(!begun, "its work stops at once")
        state.ended(id)
        #expect(state.renewalsRunning == 0)
    }

    @Test("a login raises both counts: a request that sent the old credential then uses the new one for a refresh too")
    func logInRaisesBoth() throws {
        var state = State()
        let sent = state.mark
        let (id, _) = try #require(Self.started(Self.next(&state, after: sent, .logIn)))
        let renewed = state.changed(isLogIn: true)
        state.ended(id)
        #expect(renewed == State.Mark(version: sent.version + 1, logIns: sent.logIns + 1))
        let refresh = Self.next(&state, after: sent, .refresh)
        #expect(Self.name(refresh) == "use")
    }

    @Test("a request renewed since uses the new credential even while a renewal runs; waiting never takes a slot")
    func orderOfChecks() throws {
        var state = State()
        let sent = state.mark
        let (first, _) = try #require(Self.started(Self.next(&state, after: sent, .refresh, at: 0)))
        _ = state.changed(isLogIn: false)
        state.ended(first)
        let (second, _) = try #require(Self.started(Self.next(&state, after: state.mark, .refresh, at: 1)))
        // A renewal runs, and the limit of two is reached: the old request still uses the credential
        // renewed since, and one that needs this renewal waits rather than being refused.
        let renewedSince = Self.next(&state, after: sent, .refresh, at: 2)
        #expect(Self.name(renewedSince) == "use")
        let waiting = Self.next(&state, after: state.mark, .refresh, at: 2)
        #expect(Self.name(waiting) == "wait")
        state.ended(second)
        let refused = Self.next(&state, after: state.mark, .refresh, at: 3)
        #expect(Self.name(refused) == "tooManyRefreshes")
    }

    @Test("a start exactly a window old still counts; the limits outlive an epoch's end")
    func windowEdgeAndEpochs() throws {
        var state = State()
        try Self.renewals(&state, .refresh, at: [0, 30])
        let atTheEdge = Self.next(&state, after: state.mark, .refresh, at: 60)
        #expect(Self.name(atTheEdge) == "tooManyRefreshes")
        let logIns = state.mark.logIns
        _ = state.epochEnded()
        #expect(state.mark.logIns == logIns)
        let nextEpoch = Self.next(&state, after: state.mark, .refresh, at: 60)
        #expect(Self.name(nextEpoch) == "tooManyRefreshes", "a logout does not reset the limit")
        let later = Self.next(&state, after: state.mark, .refresh, at: 61)
        #expect(Self.name(later) == "start")
    }
}
