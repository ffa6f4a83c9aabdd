import Foundation

/// What a recorder of traffic is told of a body read as a stream: each piece the reader takes,
/// then the end (with the error that ended it, if any).
package enum StreamEvent: Sendable {
    case piece(Data)
    case end(NetworkError?)
}

extension HTTPResponse {
    /// Whether the body arrives as a stream (a request that asked for one, and an answer that
    /// streams).
    package var isStreamed: Bool { streamedBody != nil }

    /// Tells `observer` of each piece of a streamed body as its reader takes it, then of the
    /// end; nothing for an answer that is not streamed.
    package func observingStream(_ observer: @escaping @Sendable (StreamEvent) -> Void) {
        streamedBody?.observe(observer)
    }

    /// This answer with `body` whole in place of its stream or its download's file, for an
    /// archive.
    package func withWholeBody(_ body: Data) -> HTTPResponse {
        var response = self
        response.body = body
        response.bodyFile = nil
        response.streamedBody = nil
        return response
    }

    /// A recorded streamed answer, played back as a stream: `pieces` in order, each at its
    /// moment after the head when `realTime`, else as fast as the reader takes them; then the
    /// end, with `failure` if the recorded stream failed. `nil` when the request did not ask
    /// for a stream.
    package static func replayedStream(
        status: Int, headers: HTTPHeaders, pieces: [(at: Duration, bytes: Data)], realTime: Bool,
        failure: NetworkError?, for request: HTTPRequest
    ) -> HTTPResponse? {
        guard let streaming = request.streaming else { return nil }
        let channel = streaming.makeChannel()
        let player = Task {
            let start = ContinuousClock.now
            for piece in pieces {
                if realTime { try? await Task.sleep(until: start + piece.at, clock: .continuous) }
                // A reader that stopped (or a cancel) ended the channel: nothing more to play.
                guard !Task.isCancelled, !channel.isEnded else { return }
                // The recording is in memory already: the buffer may hold all of it.
                channel.push(piece.bytes)
            }
            channel.finish(failure)
        }
        channel.connect(onDemand: {}, onCancel: { _ in player.cancel() })
        var response = HTTPResponse(status: status, headers: headers, url: try? request.wireURL())
        response.streamedBody = ResponseBodyStream.Reading(channel)
        return response
    }
}

extension HTTPRequest {
    /// Whether the caller reads the answer's body as it arrives.
    package var asksForStream: Bool { streaming != nil }
}
