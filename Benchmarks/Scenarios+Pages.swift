import Courier
import CourierTesting
import Foundation

extension Scenarios {
    /// An item of the paged list.
    private struct Item: Codable, Sendable {
        let id: Int
        let title: String
    }

    /// A page of it: the items and whether more follow.
    private struct ItemPage: Codable, Sendable {
        let list: [Item]
        let hasMore: Bool
    }

    /// S14: pages. Pages per second through `client.pages` against a loop an app writes by hand
    /// with `client.reply` (the same requests and decoding, on one client), and the peak memory
    /// growth of a walk through 10,000 pages (2,000 with `--quick`).
    func s14Pages() async throws -> [Measurement] {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.isRecording = false
        server.route("/list") { request in
            let page = Int(request.query["page"] ?? "") ?? 1
            let last = Int(request.query["last"] ?? "") ?? 1
            let items = (0..<(page <= last ? 20 : 0)).map {
                Item(id: (page - 1) * 20 + $0, title: "Item \($0) of page \(page)")
            }
            return .envelope(data: ItemPage(list: items, hasMore: page < last))
        }
        let client = NetworkClient(
            configuration: .init(baseURL: server.baseURL, transport: NetworkClient.Configuration.defaultTransport()))
        let paging = Paging<ItemPage, Item>.pageNumber(size: 20, end: .hasMore(at: "data.hasMore"))
        let count = quick ? 200 : 1_000
        let endpoint = Endpoint<ItemPage>.get("list", query: ["last": "\(count)"])

        let pages: () async throws -> Int = {
            var read = 0
            for try await page in client.pages(endpoint, items: \.list, paging: paging) { read += page.items.count }
            return read
        }
        // What an app writes by hand: bump the page number until the flag says no more.
        let loop: () async throws -> Int = {
            var read = 0
            var number = 1
            while true {
                var request = endpoint
                request.query["page"] = String(number)
                request.query["size"] = "20"
                let page = try await client.send(request)
                read += page.list.count
                guard page.hasMore else { return read }
                number += 1
            }
        }
        let (walked, looped) = (try await pages(), try await loop())
        precondition(walked == count * 20 && looped == walked, "\(walked) and \(looped) of \(count * 20) items")
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions, warmUp: { _ = try await pages() },
            courier: { Double(count) / (try await Harness.seconds { _ = try await pages() }) },
            baseline: { Double(count) / (try await Harness.seconds { _ = try await loop() }) })
        return [
            .ratio(
                "S14",
                "\(count) pages of 20 items: client.pages vs a hand-written loop of client.send — \(transportName)",
                unit: "pages/s", courier: courier, baseline: baseline, higherIsBetter: true, minimum: 0.7),
            try await walkMemory(client),
        ]
    }

    /// Peak resident growth while walking a long list item by item.
    private func walkMemory(_ client: NetworkClient) async throws -> Measurement {
        let count = quick ? 2_000 : 10_000
        let endpoint = Endpoint<ItemPage>.get("list", query: ["last": "\(count)"])
        let paging = Paging<ItemPage, Item>.pageNumber(size: 20, end: .hasMore(at: "data.hasMore"))
        var items = 0
        let growth = try await Memory.peakGrowth {
            for try await _ in client.pages(endpoint, items: \.list, paging: paging).items { items += 1 }
        }
        precondition(items == count * 20, "the walk gave \(items) of \(count * 20) items")
        let megabytes = Double(growth) / 1_048_576
        return Measurement(
            scenario: "S14m", detail: "a walk through \(count) pages, item by item: peak RSS growth — \(transportName)",
            unit: "MB", courier: megabytes, baseline: 2, ratio: 2 / max(megabytes, 0.001), target: "≤ 2 MB",
            meetsTarget: megabytes <= 2)
    }
}
