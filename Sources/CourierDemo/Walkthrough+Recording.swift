import Courier
import CourierTesting
import Foundation

extension Walkthrough {
    /// Step 14: the backend recorded into an HTTP archive, replayed with nothing sent, and a
    /// client's latest exchanges exported for a bug report.
    func recording() async {
        heading("14. Recorded traffic: record the backend once, replay it offline, export it as HAR")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("orders.har")
        await step {
            let session = Session(placement: .bearer)
            try await session.logIn(Credential(accessToken: "demo-token-2f9c41"))
            var configuration = NetworkClient.Configuration(baseURL: client.configuration.baseURL, session: session)
            configuration.transport = try RecordingTransport(
                file: file, mode: .recordAll, wrapping: NetworkClient.Configuration.defaultTransport())
            configuration.keptExchanges = 10
            let recording = NetworkClient(configuration: configuration)
            _ = try await recording.send(.orders(page: 1))
            _ = try await recording.send(.orders(page: 2))
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            print(
                "   recorded 2 exchanges (\(text.utf8.count / 1024) KB); the token is in it: \(text.contains("demo-token"))"
            )
            let exported = recording.recentTraffic()
            print("   the client's own export holds \(exported.entries.count) exchanges, as HAR for a bug report")

            configuration.transport = try RecordingTransport(file: file, mode: .replay)
            let offline = NetworkClient(configuration: configuration)
            let sentBefore = server.requests.count
            let page = try await offline.send(.orders(page: 2))
            print("   replayed page 2 (\(page.count) orders) with \(server.requests.count - sentBefore) requests sent")
            _ = try await offline.send(.orders(page: 3))
        }
    }
}
