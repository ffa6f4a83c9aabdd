import Courier
import CourierTesting
import Foundation

/// A headline, as the demo's news route serves it.
struct Headline: Codable, Sendable {
    let title: String
}

extension Walkthrough {
    /// Step 11: the cache — the saved answer first and then the network's, a `304` that confirms
    /// the saved one, identical requests sharing one transfer, and the saved answer while the
    /// server is down.
    func caching() async {
        heading("11. Caching and offline: the saved answer first, then the fresh one")
        let desk = NewsDesk()
        server.route("/api/v1/news") { request in desk.answer(to: request) }
        var configuration = client.configuration
        configuration.cache = ResponseCache(store: MemoryCacheStore())
        let cachingClient = NetworkClient(configuration: configuration)
        let news = Endpoint<[Headline]>.get("news").caching(.offlineFallback)
        await step {
            for screen in 1...3 {
                if screen == 3 { desk.publish("Markets rally") }
                var shown: [String] = []
                for try await reply in cachingClient.updates(for: news) {
                    let source =
                        reply.cached.map { $0.isRevalidated ? "saved, confirmed by a 304" : "saved" }
                        ?? "from the network"
                    shown.append("\(reply.value.count) headlines (\(source))")
                }
                print("   screen \(screen): " + shown.joined(separator: ", then "))
            }
        }
        await step {
            desk.slowDown()
            let before = desk.requestCount
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { _ = try await cachingClient.send(news) } }
                try await group.waitForAll()
            }
            print("   100 identical GETs at once → \(desk.requestCount - before) request on the wire, shared by all")
        }
        await step {
            desk.goDown()
            let reply = try await cachingClient.reply(to: news)
            print(
                "   the server is down → \(reply.value.count) headlines from the cache,"
                    + " marked \(reply.cached?.isStale == true ? "stale" : "fresh")")
        }
    }
}

/// The news route: headlines whose count is their version (`ETag`), answered `304` when the
/// client has that version; it can publish, slow down and go down.
///
/// `@unchecked Sendable`: all state is guarded by `lock`.
final class NewsDesk: @unchecked Sendable {
    private let lock = NSLock()
    private var headlines = ["Rain expected", "Bridge reopens", "Library extends hours"]
    private var isSlow = false
    private var isDown = false
    private var requests = 0

    var requestCount: Int { lock.withLock { requests } }
    func publish(_ title: String) { lock.withLock { headlines.insert(title, at: 0) } }
    func slowDown() { lock.withLock { isSlow = true } }
    func goDown() { lock.withLock { isDown = true } }

    func answer(to request: LoopbackServer.Request) -> LoopbackServer.Response {
        let (titles, slow, down) = lock.withLock {
            requests += 1
            return (headlines, isSlow, isDown)
        }
        if down { return LoopbackServer.Response().with(.closeBeforeResponding) }
        let tag = "\"v\(titles.count)\""
        var response: LoopbackServer.Response
        if request.headers["If-None-Match"] == tag {
            response = .init(status: 304, headers: ["ETag": tag])
        } else {
            response = .envelope(data: titles.map(Headline.init))
            response.headers["ETag"] = tag
        }
        return slow ? response.delayed(by: .milliseconds(300)) : response
    }
}
