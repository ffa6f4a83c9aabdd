import Foundation

/// The latest exchanges of a client, their secrets hidden as they are kept, for
/// ``NetworkClient/recentTraffic()``.
///
/// `@unchecked Sendable`: `entries`, `next` and `secretValues` are guarded by `lock`.
final class TrafficLog: @unchecked Sendable {
    /// The most bytes of each body kept: 256 KiB.
    static let bodyLimit = 256 << 10

    let capacity: Int
    private let lock = NSLock()
    /// A ring of at most `capacity` entries; `next` is where the next one goes.
    private var entries: [HTTPArchive.Entry] = []
    private var next = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// The latest secret values the layers marked, hidden in the whole archive on export.
    private var secretValues: [String] = []
    /// How many of them are kept: tokens and signatures change, the oldest go first.
    static let secretValueLimit = 256

    func add(_ entry: HTTPArchive.Entry, secretValues values: [String]) {
        lock.withLock {
            for value in values where !secretValues.contains(value) { secretValues.append(value) }
            if secretValues.count > Self.secretValueLimit {
                secretValues.removeFirst(secretValues.count - Self.secretValueLimit)
            }
            if entries.count < capacity {
                entries.append(entry)
            } else {
                entries[next] = entry
            }
            next = (next + 1) % capacity
        }
    }

    /// The entries kept, oldest first, with every secret value marked since hidden in all of
    /// them (the answer that gave a token holds it too).
    var archive: HTTPArchive {
        let (archive, values) = lock.withLock {
            (
                HTTPArchive(entries: entries.count < capacity ? entries : Array(entries[next...] + entries[..<next])),
                secretValues
            )
        }
        guard !values.isEmpty else { return archive }
        return (try? HTTPArchive(jsonData: archive.jsonData(hiding: values))) ?? HTTPArchive()
    }
}

/// Keeps each exchange of the transport it wraps in a ``TrafficLog``: a failed one as status 0
/// with the error in its comment, as browsers write one.
struct ArchivingTransport: Transport {
    let inner: any Transport
    let log: TrafficLog

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let started = Date()
        let clock = ContinuousClock.now
        do {
            let response = try await inner.send(request)
            log.add(entry(request, response, started: started, since: clock), secretValues: request.notes.secretValues)
            return response
        } catch {
            var entry = entry(request, HTTPResponse(status: 0), started: started, since: clock)
            let described = NetworkError.wrapping(error).describing(request, redactor: request.redactor).description
            entry.comment = ArchiveRedaction(redactor: request.redactor, secretValues: request.notes.secretValues)
                .text(described)
            log.add(entry, secretValues: request.notes.secretValues)
            throw error
        }
    }

    private func entry(
        _ request: HTTPRequest, _ response: HTTPResponse, started: Date, since clock: ContinuousClock.Instant
    )
        -> HTTPArchive.Entry
    {
        HTTPArchive.Entry(
            request: request, body: nil, response: response, startedAt: started, duration: clock.duration(to: .now),
            redactor: request.redactor, bodyLimit: TrafficLog.bodyLimit)
    }
}

extension NetworkClient {
    /// The latest exchanges this client had with its servers, as an HTTP archive (HAR 1.2) for a
    /// bug report: at most ``NetworkClient/Configuration/keptExchanges`` of them, oldest first,
    /// every attempt of a retried request on its own, a failed one with status 0 and its error
    /// in `comment`. Each is kept as the transport saw it (the token, signature and common
    /// parameters on it), its secrets hidden by the client's
    /// ``NetworkClient/Configuration/redactor`` and the token and signature values hidden
    /// wherever they appear; at most 256 KiB of each body is kept.
    ///
    /// ```swift
    /// var configuration = NetworkClient.Configuration(baseURL: apiURL)
    /// configuration.keptExchanges = 50
    /// let client = NetworkClient(configuration: configuration)
    /// // … later, from a "report a problem" screen:
    /// try client.recentTraffic().jsonData().write(to: reportFolder.appending(path: "traffic.har"))
    /// ```
    /// - Returns: The archive; empty when ``NetworkClient/Configuration/keptExchanges`` is 0.
    public nonisolated func recentTraffic() -> HTTPArchive {
        trafficLog?.archive ?? HTTPArchive()
    }
}
