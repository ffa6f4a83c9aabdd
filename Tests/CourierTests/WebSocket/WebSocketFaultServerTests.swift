import Courier
import CourierTesting
import Foundation
import Testing

/// The client against FaultServer's WebSocket scripts: each broken frame a server can send, and
/// the close the client answered with, read from the bytes the server received.
@Suite struct WebSocketFaultServerTests {
    private static func client(_ server: FaultServer) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL, timeout: .seconds(10) * TestTiming.scale, transport: TestTransport.make()))
    }

    /// The close frames among the client's frames after its handshake, in `received`.
    private static func closes(in received: Data) throws -> [WebSocketClose] {
        guard let headEnd = received.firstRange(of: Data("\r\n\r\n".utf8))?.upperBound else { return [] }
        var reader = WebSocketFrameReader(expectsMasked: true, maximumPayload: 1 << 20)
        reader.append(received[headEnd...])
        var closes: [WebSocketClose] = []
        while let frame = try reader.next() {
            if frame.opcode == .close { closes.append(try WebSocketClose(payload: frame.payload)) }
        }
        return closes
    }

    @Test(
        "each broken frame fails the connection or ends it, answered with the close it calls for",
        arguments: WebSocketFault.allCases)
    func brokenFrame(_ fault: WebSocketFault) async throws {
        // A frame cut short is followed by the server's hang-up; after the others the server
        // waits for the client's close and its hang-up.
        let server = try FaultServer(
            [.acceptWebSocket, .send(fault)] + (fault == .frameCutMidHeader ? [.close] : []))
        defer { server.stop() }
        let socket = try await Self.client(server).webSocket(.webSocket("broken"))
        var messages = socket.messages.makeAsyncIterator()
        if fault == .closeWithoutCode {
            #expect(try await messages.next() == nil)
            #expect(socket.closeFrame?.code == .noStatus)
        } else {
            let error = await #expect(throws: NetworkError.self) { try await messages.next() }
            #expect(error?.code == .transport)
        }
        #expect(
            await server.waitUntil(timeout: .seconds(5) * TestTiming.scale) { $0.connections.first?.isClosed == true })
        let answered = try Self.closes(in: server.connections.first?.received ?? Data())
        #expect(answered.map(\.code) == (fault.closeCode.map { [$0] } ?? []))
    }

    @Test("the switch to WebSocket can be scripted after the head was read and a pause")
    func lateAccept() async throws {
        let server = try FaultServer([
            .readHead, .pause(.milliseconds(100)), .acceptWebSocket, .send(.closeWithoutCode),
        ])
        defer { server.stop() }
        let socket = try await Self.client(server).webSocket(.webSocket("late"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == nil)
        #expect(socket.closeFrame?.code == .noStatus)
    }
}
