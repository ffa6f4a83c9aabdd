import CourierTesting
import Foundation
import Testing

@testable import Courier

/// The header fields a transport adds on its own, alike on both.
@Suite struct DefaultHeaderTests {
    @Test("a request carries a User-Agent and an Accept-Language unless it sets its own")
    func defaults() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/echo") { _ in .envelope(data: "ok") }

        _ = try await backend.client.send(Endpoint<String>.get("echo"))
        _ = try await backend.client.send(
            Endpoint<String>.get("echo", headers: ["User-Agent": "Shop/2.1", "Accept-Language": "de"]))

        let requests = backend.server.requests
        try #require(requests.count == 2)
        let agent = try #require(requests[0].headers["User-Agent"])
        #expect(agent.contains(ProcessInfo.processInfo.processName), "\(agent)")
        if let language = Locale.current.language.languageCode?.identifier {
            #expect(requests[0].headers["Accept-Language"] == language)
        }
        for name in ["User-Agent", "Accept-Language"] {
            #expect(requests[1].headers.fields.filter { $0.name.lowercased() == name.lowercased() }.count == 1)
        }
        #expect(requests[1].headers["User-Agent"] == "Shop/2.1")
        #expect(requests[1].headers["Accept-Language"] == "de")
    }
}
