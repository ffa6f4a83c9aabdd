import Testing

@testable import Courier

/// The bookkeeping of shared transfers, driven directly: each order of events that the
/// loopback tests can reach only with gates and timing.
@Suite struct SharedTransferStateTests {
    /// Work is a name; a transfer is its number.
    typealias State = SharedTransferState<String, Int>

    static let orders = ["GET", "/orders"]
    static let menu = ["GET", "/menu"]

    /// Arrives and returns what the caller was told, making transfers numbered from `next`.
    static func arrive(
        _ state: inout State, _ key: [String] = orders, priority: TaskPriority = .medium, making number: Int = 1
    ) -> State.Arrival {
        state.arrive(key, priority: priority, make: { number })
    }

    static func started(_ arrival: State.Arrival) -> (State.ID, Int)? {
        if case .start(let id, let transfer) = arrival { return (id, transfer) }
        return nil
    }

    static func joined(_ arrival: State.Arrival) -> (State.ID, Int, String?)? {
        if case .join(let id, let transfer, let running) = arrival { return (id, transfer, running) }
        return nil
    }

    @Test("the first caller starts; an identical one joins its transfer, with the work once it runs")
    func startThenJoin() throws {
        var state = State()
        let (id, transfer) = try #require(Self.started(Self.arrive(&state, making: 1)))
        #expect(transfer == 1)
        let early = try #require(Self.joined(Self.arrive(&state, making: 2)))
        #expect(early.0 == id && early.1 == 1 && early.2 == nil, "joined before the work is known")
        #expect(state.started(id, work: "task", priority: .medium) == nil)
        let late = try #require(Self.joined(Self.arrive(&state, making: 3)))
        #expect(late.2 == "task", "a caller who joins later raises the running work's priority itself")
        #expect(state.waiterCount == 3)
        #expect(state.hasWork(Self.orders))
    }

    @Test("requests with other keys never share")
    func keysApart() throws {
        var state = State()
        _ = try #require(Self.started(Self.arrive(&state, Self.orders)))
        _ = try #require(Self.started(Self.arrive(&state, Self.menu)))
        #expect(state.transferCount == 2)
    }

    @Test("the work is cancelled when the last caller leaves, not before")
    func lastLeaves() throws {
        var state = State()
        let (id, _) = try #require(Self.started(Self.arrive(&state)))
        _ = state.started(id, work: "task", priority: .medium)
        _ = Self.arrive(&state)
        _ = Self.arrive(&state)
        #expect(state.leave(id) == nil)
        #expect(state.leave(id) == nil)
        #expect(state.leave(id) == "task")
        #expect(state.transferCount == 0 && state.waiterCount == 0)
        #expect(state.leave(id) == nil, "a leave after the last changes nothing")
        #expect(Self.started(Self.arrive(&state, making: 9))?.1 == 9, "the next caller starts anew")
    }

    @Test("once a transfer ends, the next caller starts a new one; its callers still leave it")
    func endedThenArrive() throws {
        var state = State()
        let (first, _) = try #require(Self.started(Self.arrive(&state, making: 1)))
        _ = state.started(first, work: "first", priority: .medium)
        state.ended(first)
        let (second, transfer) = try #require(Self.started(Self.arrive(&state, making: 2)))
        #expect(second != first && transfer == 2)
        #expect(state.leave(first) == "first", "cancelling the ended work does nothing, but it is the one")
        #expect(state.waiterCount == 1, "the new transfer is untouched")
        #expect(Self.joined(Self.arrive(&state)).map { $0.0 } == second)
    }

    @Test("an end that comes after the last caller left changes nothing")
    func endAfterLeave() throws {
        var state = State()
        let (id, _) = try #require(Self.started(Self.arrive(&state)))
        _ = state.started(id, work: "task", priority: .medium)
        #expect(state.leave(id) == "task")
        let (next, _) = try #require(Self.started(Self.arrive(&state, making: 2)))
        state.ended(id)
        #expect(Self.joined(Self.arrive(&state)).map { $0.0 } == next, "the new transfer stays joinable")
    }

    @Test("after detachAll() callers start anew; the detached transfer goes on for its own callers")
    func detach() throws {
        var state = State()
        let (old, _) = try #require(Self.started(Self.arrive(&state, making: 1)))
        _ = state.started(old, work: "old", priority: .medium)
        _ = Self.arrive(&state)
        state.detachAll()
        #expect(state.waiterCount == 0, "no one waits for a joinable transfer")
        let (new, _) = try #require(Self.started(Self.arrive(&state, making: 2)))
        _ = state.started(new, work: "new", priority: .medium)
        #expect(state.leave(old) == nil)
        #expect(state.leave(old) == "old")
        state.ended(old)
        #expect(state.waiterCount == 1, "the old transfer's end leaves the new one joinable")
        #expect(state.leave(new) == "new")
    }

    @Test("a caller who joins before the work is known raises it, when higher, as it starts")
    func priorityBeforeWork() throws {
        var state = State()
        let (id, _) = try #require(Self.started(Self.arrive(&state, priority: .low)))
        _ = Self.arrive(&state, priority: .high)
        _ = Self.arrive(&state, priority: .medium)
        #expect(state.started(id, work: "task", priority: .low) == .high)

        var lower = State()
        let (other, _) = try #require(Self.started(Self.arrive(&lower, priority: .high)))
        _ = Self.arrive(&lower, priority: .low)
        #expect(lower.started(other, work: "task", priority: .high) == nil, "never lowered")
    }

    @Test("work that starts after every caller left is not kept")
    func startedAfterLeaving() throws {
        var state = State()
        let (id, _) = try #require(Self.started(Self.arrive(&state)))
        #expect(state.leave(id) == nil, "no work yet")
        #expect(state.started(id, work: "task", priority: .medium) == nil)
        #expect(state.transferCount == 0 && !state.hasWork(Self.orders))
    }
}
