import Courier
import CourierTesting
import Foundation
import Testing

/// A logout in the last moments of a request: after its response arrived and before, or while,
/// the client reads it. Nothing of that response reaches the caller or stays on disk.
@Suite struct LateResponseTests {
    static let ann = Credential(accessToken: "old", refreshToken: "r1", userID: "ann")

    /// A transport that holds each complete answer at `gate`, whatever happens to the caller
    /// meanwhile: the moment between an answer arriving and the client using it.
    struct HeldAnswers: Transport {
        let inner: any Transport
        let gate: Gate

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await inner.send(request)
            await gate.pass()
            return response
        }
    }

    @Test("a download whose answer arrived just before a logout is not moved into place, and leaves no file")
    func logoutBeforeDownloadIsStored() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/report") { _ in .init(status: 200, body: Data("ann's report".utf8)) }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gate = Gate()
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                transport: HeldAnswers(
                    inner: TestTransport.make() ?? NetworkClient.Configuration.defaultTransport(), gate: gate)))

        let download = client.download(DownloadEndpoint.download("report"), to: directory.file("report.txt"))
        await gate.arrivals(1)
        try await session.logOut()
        gate.open()
        let error = await networkError { _ = try await download.value }

        #expect(error?.code == .cancelled)
        #expect(directory.names.isEmpty, "neither the report nor its partial file: \(directory.names)")
    }

    @Test("a response being decoded when the user logs out is not given: the request ends cancelled")
    func logoutWhileDecoding() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/profile") { _ in .init(status: 200, body: Data("ann's profile".utf8)) }
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let client = NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appendingPathComponent("v1/"), session: session,
                transport: TestTransport.make()))
        // The decoding waits, on its own thread, until the test has logged out (at most 10 s).
        let decoding = Flag()
        let loggedOut = DispatchSemaphore(value: 0)
        let slowText = ResponseDecoding<String> { response, _ in
            decoding.set()
            _ = loggedOut.wait(timeout: .now() + 10)
            return String(decoding: response.body, as: UTF8.self)
        }

        let request = Task { try await client.send(Endpoint<String>.get("profile", decoding: slowText)) }
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while !decoding.isSet, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        try await session.logOut()
        loggedOut.signal()
        let error = await networkError { _ = try await request.value }

        #expect(decoding.isSet)
        #expect(error?.code == .cancelled, "Ann's profile is not handed over after her logout")
    }
}
