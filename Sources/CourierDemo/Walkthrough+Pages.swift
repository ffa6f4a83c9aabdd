import Courier
import Foundation

extension Walkthrough {
    /// Step 13: a list read page by page as an AsyncSequence, then continued from a saved
    /// position without asking for the pages before it.
    func pages() async {
        heading("13. Pages: every order, one request per page; a saved position continues the list")
        await step {
            let before = server.requests.count
            let pages = client.pages(Endpoint<[Order]>.get("orders"), paging: .pageNumber(size: 20))
            var count = 0
            for try await _ in pages.items { count += 1 }
            print("   \(count) orders in \(server.requests.count - before) requests (the last page is short)")

            var iterator = pages.makeAsyncIterator()
            guard let first = try await iterator.next(), let next = first.next else { return }
            let saved = try JSONEncoder().encode(next)
            print("   after page 1, saved: \(String(decoding: saved, as: UTF8.self))")
            let position = try JSONDecoder().decode(PagePosition.self, from: saved)
            let resumedFrom = server.requests.count
            var rest: [Int] = []
            for try await page in pages.starting(from: position) { rest.append(page.items.count) }
            let asked = server.requests.dropFirst(resumedFrom).map { $0.query["page"] ?? "-" }
            print("   continued: pages \(asked.joined(separator: ", ")) with \(rest) orders")
        }
    }
}
