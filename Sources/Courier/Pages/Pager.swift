import Observation

/// A list for a screen: infinite scroll and pull-to-refresh on top of a
/// ``PageSequence``, observable by SwiftUI.
///
/// ```swift
/// import Courier
/// import SwiftUI
///
/// struct Order: Codable, Sendable, Identifiable { let id: Int; let title: String }
///
/// @available(iOS 17, macOS 14, *)
/// struct OrdersView: View {
///     @State private var pager: Pager<[Order], Order>
///
///     init(client: NetworkClient) {
///         _pager = State(initialValue: Pager(client.pages(Endpoint<[Order]>.get("orders"), paging: .pageNumber(size: 20))))
///     }
///
///     var body: some View {
///         List(pager.items) { order in
///             Text(order.title).task { if order.id == pager.items.last?.id { await pager.loadNext() } }
///         }
///         .refreshable { await pager.refresh() }
///         .task { await pager.loadNext() }
///     }
/// }
/// ```
///
/// - ``loadNext()`` reads the next page and appends its items. Called while a load or a
///   refresh is under way, it waits for that one instead of starting another, and sends
///   nothing more. After a failed load it asks for the page that failed again; after a failed
///   refresh it goes on with the list on screen.
/// - ``refresh()`` reads the list anew from its first page, and replaces ``items`` with it in
///   one step once it has arrived; until then the old items stay. A load under way is dropped.
///   When the refresh fails, the list stays as it was and ``error`` says why.
///
/// A pager's walk belongs to the session as its first page found it (see
/// ``NetworkClient/pages(_:items:paging:options:from:)``): after a logout or a login as someone
/// else, ``loadNext()`` fails (or, for a list read to its end, does nothing) and no page read
/// before it is taken, until ``refresh()`` or ``reset()`` starts anew: call ``reset()`` on
/// logout to clear the list from the screen.
///
/// A load goes on when the task that asked for it is cancelled: others may be waiting for it.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable
public final class Pager<Payload: Sendable, Item: Sendable> {
    /// The items of the pages read so far, in order.
    public private(set) var items: [Item] = []
    /// What the pager is doing.
    public private(set) var activity: PagerActivity = .idle
    /// Why the last load or refresh failed; `nil` after one succeeds.
    public private(set) var error: NetworkError?
    /// Whether the list's last page (or the sequence's limit) was read: ``loadNext()`` sends
    /// nothing more until a ``refresh()``.
    public private(set) var isFinished = false
    /// The page read last, for its reply (a total, say) and its ``Page/next`` position.
    public private(set) var lastPage: Page<Payload, Item>?

    @ObservationIgnored private let pages: PageSequence<Payload, Item>
    /// The walk the items came from; `nil` before the first load.
    @ObservationIgnored private var walk: PageWalk<Payload, Item>?
    /// The load or refresh under way.
    @ObservationIgnored private var running: Task<Void, Never>?
    /// Counts loads and refreshes, so one that a refresh replaced changes nothing.
    @ObservationIgnored private var generation = 0
    /// Whether a refresh dropped a load, whose walk may have read a page the list never took:
    /// the next load goes on from the list's last page in a walk of its own.
    @ObservationIgnored private var droppedALoad = false

    /// Creates a pager that reads `pages`; nothing is sent until ``loadNext()`` or
    /// ``refresh()``.
    /// - Parameter pages: The list, from ``NetworkClient/pages(_:items:paging:options:from:)``.
    public init(_ pages: PageSequence<Payload, Item>) {
        self.pages = pages
    }

    /// Reads the next page and appends its items; waits for the load or refresh under way
    /// instead, if there is one. Does nothing once ``isFinished``.
    public func loadNext() async {
        if let running { return await running.value }
        guard !isFinished else { return }
        let (walk, pages) = (walk, pages)
        let (next, pagesTaken, itemsTaken) = (lastPage?.next, (lastPage?.index ?? -1) + 1, items.count)
        let rewinds = droppedALoad
        droppedALoad = false
        await run(.loadingNext) {
            guard let walk else { return pages.makeAsyncIterator().walk }
            guard rewinds else { return walk }
            guard let next else { return pages.makeAsyncIterator().walk }
            return walk.continuing(from: next, pagesRead: pagesTaken, itemsRead: itemsTaken)
        }
    }

    /// Reads the list again from its first page and, once that page has arrived, makes it the
    /// only page in ``items``. Waits for a refresh under way instead, if there is one; a load
    /// under way is dropped.
    public func refresh() async {
        if activity == .refreshing, let running { return await running.value }
        if activity == .loadingNext { droppedALoad = true }
        running?.cancel()
        let pages = pages
        await run(.refreshing) { pages.starting(from: nil).makeAsyncIterator().walk }
    }

    /// Forgets the list: drops a load under way and empties ``items``. The next
    /// ``loadNext()`` reads from the first page (after a logout, say).
    public func reset() {
        running?.cancel()
        running = nil
        generation += 1
        walk = nil
        droppedALoad = false
        items = []
        activity = .idle
        error = nil
        isFinished = false
        lastPage = nil
    }

    /// Runs a load or a refresh in a task of its own, with the walk `walk` gives.
    private func run(
        _ activity: PagerActivity, _ walk: @escaping @Sendable () async -> PageWalk<Payload, Item>
    ) async {
        generation += 1
        let generation = generation
        self.activity = activity
        let task = Task { [weak self] in
            let walk = await walk()
            walk.retry()
            let result: Result<Page<Payload, Item>?, NetworkError>
            do throws(NetworkError) {
                result = .success(try await walk.next())
            } catch {
                result = .failure(error)
            }
            self?.finish(generation, refreshing: activity == .refreshing, walk, result)
        }
        running = task
        await task.value
    }

    /// Takes in a load's result, unless a refresh or a reset replaced the load.
    private func finish(
        _ generation: Int, refreshing: Bool, _ walk: PageWalk<Payload, Item>,
        _ result: Result<Page<Payload, Item>?, NetworkError>
    ) {
        guard generation == self.generation else { return }
        running = nil
        activity = .idle
        var result = result
        // A page read before a logout or a login as someone else is not taken after it.
        if case .success(.some) = result {
            do throws(NetworkError) { try walk.checkSession() } catch { result = .failure(error) }
        }
        // A failed refresh leaves the list (and the walk it came from) as it was.
        if case .success = result {
            self.walk = walk
        } else if !refreshing {
            self.walk = walk
        }
        switch result {
        case .success(let page):
            error = nil
            if refreshing {
                droppedALoad = false
                items = page?.items ?? []
                lastPage = page
            } else {
                items += page?.items ?? []
                lastPage = page ?? lastPage
            }
            isFinished = page?.isLast ?? true
        case .failure(let failure):
            error = failure
        }
    }
}

/// What a ``Pager`` is doing.
public enum PagerActivity: Sendable, Hashable {
    /// Nothing.
    case idle
    /// Reading the next page.
    case loadingNext
    /// Reading the list again from its first page.
    case refreshing
}
