import Courier
import Foundation

/// A transport that records a backend's answers into an HTTP archive (HAR 1.2) and replays
/// them in later runs, offline and fast.
///
/// ```swift
/// let transport = try RecordingTransport(
///     file: recordings.appending(path: "orders.har"), wrapping: NetworkClient.Configuration.defaultTransport())
/// let client = NetworkClient(configuration: .init(baseURL: backend, transport: transport))
/// ```
///
/// In ``RecordingMode/replay`` (the default, unless `COURIER_RECORDING` says otherwise) it
/// sends nothing: each request is answered by the first recorded exchange that matches it and
/// has not answered yet, so identical requests get their answers in recorded order (GET, PUT,
/// GET on one URL sees the change). A request that matches none fails with
/// `NetworkError.Code.transport` and a diff against the closest recorded request. Run once
/// with `COURIER_RECORDING=missing` (or `all`) and a backend to record.
///
/// What is recorded is what went on the wire, after every layer: the token, the signature and
/// the common parameters included. Secrets are hidden before anything is written, by the
/// client's `NetworkClient.Configuration.redactor` and `redactor`: secret header fields,
/// query and form pairs, JSON fields in request and response bodies, the URL's user name and
/// password, and the token and signature values wherever they appear. A request is matched on
/// the same redacted form (method, URL path, query pairs, body; JSON as values, forms as pairs,
/// multipart without its boundary), so a hidden secret never breaks the match, and values that
/// change on every call (the signing layer's timestamp and nonce, and ``VolatileParts``) are
/// left out. Only the last attempt of a retried request is kept.
///
/// Each transport has its own recording and no global state, so tests that replay run in
/// parallel. A recording is written whole, atomically, after each exchange recorded.
///
/// A body read as a stream (`NetworkClient.stream(_:options:)`, server-sent events) is
/// recorded as its reader takes it, with the moment each piece arrived, and kept when it ends
/// (a reader that stops early keeps what it read). It is replayed as a stream, as fast as the
/// reader takes it or at the recorded pace (``StreamReplay``), ending as the recorded one did.
///
/// `@unchecked Sendable`: `slots`, `indexes`, `unsaved` and `secretValues` are guarded by `lock`.
public final class RecordingTransport: Transport, @unchecked Sendable {
    /// The recording's file.
    public let file: URL
    /// What the transport does with a request.
    public let mode: RecordingMode
    private let inner: (any Transport)?
    private let volatile: VolatileParts
    private let redactor: Redactor
    private let lock = NSLock()
    /// Held while the file is written, one write at a time.
    private let writing = NSLock()
    private let streamReplay: StreamReplay
    private var slots: [Slot]
    /// The slots by their requests as matched, one index for each set of names the signing
    /// layer declared volatile (see `take(_:extra:names:)`).
    private var indexes: [Set<String>: [RecordedRequest: [Int]]] = [:]
    /// Why a stream recorded earlier could not be written, until a request is told or a later
    /// write keeps it.
    private var unsaved: NetworkError?
    /// Every secret value the layers marked on a request of this run, hidden in the whole file.
    private var secretValues = Set<String>()

    /// One recorded exchange and what replay knows of it.
    private struct Slot {
        var entry: HTTPArchive.Entry
        /// The call it was recorded for in this run (so a later attempt of the call replaces
        /// it); `nil` for one read from the file.
        var call: UInt64?
        var used = false
        let method: String
        let path: String
        /// Its request as matched, for the volatile names it was last read with.
        var key: (names: Set<String>, request: RecordedRequest)?

        init(_ entry: HTTPArchive.Entry, call: UInt64? = nil) {
            self.entry = entry
            self.call = call
            method = entry.request.method.uppercased()
            path = RecordedRequest.path(of: entry.request.url)
        }
    }

    /// Creates a transport over a recording.
    /// - Parameters:
    ///   - file: The recording (a `.har` file); it need not exist until something is recorded.
    ///   - mode: What to do with requests; `nil` reads `COURIER_RECORDING`, and replays
    ///     without it.
    ///   - inner: The transport that reaches the backend when recording; `nil` for replay only.
    ///   - volatile: Parameters and JSON fields left out when matching, beyond the signing
    ///     layer's.
    ///   - redactor: Names hidden in the recording beyond the client's redactor's (none by
    ///     default).
    ///   - streamReplay: How a recorded stream is played back.
    /// - Throws: `NetworkError.Code.decodingFailed` when the file is not a HAR archive,
    ///   `NetworkError.Code.fileSystem` when it cannot be read,
    ///   `NetworkError.Code.invalidRequest` when `COURIER_RECORDING` names no mode.
    public init(
        file: URL, mode: RecordingMode? = nil, wrapping inner: (any Transport)? = nil,
        volatile: VolatileParts = .none, redactor: Redactor = Redactor(names: []),
        streamReplay: StreamReplay = .asFastAsPossible
    ) throws(NetworkError) {
        self.file = file
        self.streamReplay = streamReplay
        if let mode { self.mode = mode } else { self.mode = try RecordingMode.fromEnvironment() }
        self.inner = inner
        self.volatile = volatile
        self.redactor = redactor
        guard self.mode != .recordAll, FileManager.default.fileExists(atPath: file.path) else {
            slots = []
            return
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw NetworkError(
                .fileSystem, "The recording \(file.lastPathComponent) cannot be read.", underlying: error)
        }
        let archive = try HTTPArchive(jsonData: data)
        slots = archive.entries.map { Slot($0) }
    }

    /// The exchanges recorded, in order: those read from the file and those recorded since.
    public var archive: HTTPArchive { lock.withLock { HTTPArchive(entries: slots.map(\.entry)) } }

    /// How many recorded exchanges have answered a request.
    public var replayedCount: Int { lock.withLock { slots.count { $0.used && $0.call == nil } } }

    /// Answers from the recording, or sends and records, as ``mode`` says.
    /// - Parameter request: The request.
    /// - Returns: The recorded or received answer.
    /// - Throws: `NetworkError`: `NetworkError.Code.invalidRequest` with a diff for a request
    ///   the recording does not hold in replay mode, `NetworkError.Code.cancelled`,
    ///   `NetworkError.Code.invalidRequest` for a request that cannot go on the wire, and
    ///   whatever the wrapped transport throws.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard !Task.isCancelled else {
            throw NetworkError(.cancelled, "The request was cancelled before it was sent.")
        }
        try request.checkWireSafety()
        // A stream recorded after its request returned could not say that it was not written.
        if let unsaved = lock.withLock({ () -> NetworkError? in
            defer { unsaved = nil }
            return unsaved
        }) {
            throw unsaved
        }
        lock.withLock { secretValues.formUnion(request.notes.secretValues) }
        let body = try await Self.bodyBytes(of: request)
        let redactor = Redactor(names: request.clientRedactor.names.union(self.redactor.names))
        let archived = HTTPArchive.Request(archiving: request, body: body, redactor: redactor)
        let names: @Sendable (String) -> Set<String> = { [volatile] path in
            volatile.names(onPath: path, adding: request.notes.volatileNames)
        }
        let sent = RecordedRequest(archived, volatile: names)
        if mode != .recordAll {
            switch lock.withLock({ take(sent, extra: request.notes.volatileNames, names: names) }) {
            case .success(let entry): return try answer(entry, to: request)
            case .failure(let unmatched) where mode == .replay: throw unmatched
            case .failure: break
            }
        }
        guard let inner else {
            throw NetworkError(
                .invalidRequest, "\(mode.rawValue) mode needs a transport to record with (`wrapping:`).")
        }
        let started = Date()
        let clock = ContinuousClock.now
        let response = try await inner.send(request)
        let head = clock.duration(to: .now)
        let exchange: @Sendable (HTTPResponse, Duration) -> HTTPArchive.Entry = { answer, duration in
            HTTPArchive.Entry(
                request: request, body: body, response: answer, startedAt: started, duration: duration,
                redactor: redactor)
        }
        guard response.isStreamed else {
            // A download's body is in its file: the recording keeps the bytes, to write them again.
            let whole = try response.bodyFile.map { file throws(NetworkError) in
                var bytes = try Self.contents(of: file, what: "The downloaded file")
                // A resumed download's file holds the bytes before the range too.
                if response.status == 206, let offset = request.download?.offset, offset > 0 {
                    bytes = bytes.dropFirst(Int(min(offset, Int64(bytes.count))))
                }
                return response.withWholeBody(Data(bytes))
            }
            try keep(exchange(whole ?? response, head), of: request, as: sent, names: names)
            return response
        }
        // A streamed body is recorded as its reader takes it, and kept when it ends. The
        // observer holds the answer's head only: the stream it watches must be free to go.
        let headOnly = response.withWholeBody(Data())
        let pieces = StreamPieces()
        response.observingStream { [self] event in
            switch event {
            case .piece(let bytes): pieces.add(bytes, at: clock.duration(to: .now) - head)
            case .end(let error):
                let (whole, arrivals) = pieces.taken()
                var entry = exchange(headOnly.withWholeBody(whole), clock.duration(to: .now))
                entry.response.content.chunks = StreamPieces.chunks(
                    arrivals, total: entry.response.content.bytes?.count ?? 0)
                entry.recordStreamEnd(error, of: request, redactor: redactor)
                do throws(NetworkError) {
                    try keep(entry, of: request, as: sent, names: names)
                } catch {
                    lock.withLock { unsaved = error }
                }
            }
        }
        return response
    }

    /// Adds a recorded exchange and writes the recording. An earlier attempt of the same call
    /// with the same request (a retry, a replay after a new login) is replaced; another request
    /// the call sent (a layer's own) is kept. An exchange recorded now never answers a later
    /// request of this run.
    private func keep(
        _ entry: HTTPArchive.Entry, of request: HTTPRequest, as sent: RecordedRequest,
        names: (String) -> Set<String>
    ) throws(NetworkError) {
        let call = request.notes.call
        lock.withLock {
            if call != 0 {
                let earlier = slots.indices.filter { slots[$0].call == call && key(of: $0, names: names) == sent }
                for index in earlier.reversed() { slots.remove(at: index) }
            }
            var slot = Slot(entry, call: call)
            slot.used = true
            slots.append(slot)
            // The slots changed: the indexes are built again when a request is next matched.
            indexes = [:]
        }
        try save()
    }

    /// The first unused exchange that matches `request`, now used; or the error that says
    /// what the closest one differs in.
    private func take(_ request: RecordedRequest, extra: [String], names: (String) -> Set<String>) -> Result<
        HTTPArchive.Entry, NetworkError
    > {
        // The slots by their requests as read with these volatile names, built once for them.
        let indexKey = Set(extra.map { $0.lowercased() })
        if indexes[indexKey] == nil {
            var index: [RecordedRequest: [Int]] = [:]
            for slot in slots.indices { index[key(of: slot, names: names), default: []].append(slot) }
            indexes[indexKey] = index
        }
        if let candidates = indexes[indexKey]?[request], let found = candidates.first(where: { !slots[$0].used }) {
            slots[found].used = true
            indexes[indexKey]?[request]?.removeAll { $0 <= found }
            return .success(slots[found].entry)
        }
        var closest: (index: Int, likeness: Int, request: RecordedRequest)?
        for index in slots.indices {
            let recorded = key(of: index, names: names)
            let likeness = recorded.likeness(to: request)
            if likeness > closest?.likeness ?? -1 { closest = (index, likeness, recorded) }
        }
        var lines = ["No recorded exchange in \(file.lastPathComponent) answers \(request.method) \(request.path)."]
        if let closest {
            let differences = request.differences(from: closest.request)
            if differences.isEmpty {
                let count = slots.count {
                    $0.entry.request.method.uppercased() == request.method && $0.path == request.path
                }
                lines.append("Every one of the \(count) recorded answers to it was used by an earlier request.")
            } else {
                lines.append(
                    "The closest is exchange \(closest.index + 1), \(closest.request.method) \(closest.request.path):")
                lines += differences.map { "  " + $0 }
            }
        } else {
            lines.append("The recording holds no exchange.")
        }
        lines.append("Record it with \(RecordingMode.environmentVariable)=missing and a backend.")
        // Not a transport failure: nothing retries it, and a stream does not reconnect for it.
        return .failure(NetworkError(.invalidRequest, lines.joined(separator: "\n")))
    }

    /// Slot `index`'s request as matched with the volatile names `names` gives.
    private func key(of index: Int, names: (String) -> Set<String>) -> RecordedRequest {
        let wanted = names(slots[index].path)
        if let key = slots[index].key, key.names == wanted { return key.request }
        let request = RecordedRequest(slots[index].entry.request) { _ in wanted }
        slots[index].key = (wanted, request)
        return request
    }

    /// The recorded answer, delivered as a transport delivers one.
    private func answer(_ entry: HTTPArchive.Entry, to request: HTTPRequest) throws(NetworkError) -> HTTPResponse {
        guard entry.response.status != 0 else {
            throw NetworkError(.transport, entry.comment ?? "The recorded exchange failed without an answer.")
        }
        guard let body = entry.response.content.bytes else {
            throw NetworkError(.decodingFailed, "A recorded body in \(file.lastPathComponent) is not valid base64.")
        }
        // The body is kept decoded, and perhaps redacted: its framing fields no longer describe it.
        let framing: Set<String> = ["content-length", "content-encoding", "transfer-encoding"]
        let headers = HTTPHeaders(
            entry.response.headers.filter { !framing.contains($0.name.lowercased()) }.map {
                HTTPHeaders.Field(name: $0.name, value: $0.value)
            })
        let content = entry.response.content
        if request.asksForStream, let chunks = content.chunks,
            let stream = HTTPResponse.replayedStream(
                status: entry.response.status, headers: headers, pieces: StreamPieces.split(body, chunks),
                realTime: streamReplay == .realTime, failure: entry.streamFailure,
                for: request)
        {
            return stream
        }
        return try HTTPResponse.delivered(status: entry.response.status, headers: headers, body: body, for: request)
    }

    /// Writes the recording whole, atomically: one write at a time, each of the slots as they
    /// are when it begins, so requests being matched never wait for the disk.
    private func save() throws(NetworkError) {
        let failure = writing.withLock { () -> NetworkError? in
            let (archive, secrets) = lock.withLock { (HTTPArchive(entries: slots.map(\.entry)), secretValues) }
            do {
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                // Every secret value a layer marked in this run is hidden in every exchange.
                try archive.jsonData(hiding: secrets).write(to: file, options: .atomic)
                // What an earlier write could not keep is in this one.
                lock.withLock { unsaved = nil }
                return nil
            } catch {
                return NetworkError(
                    .fileSystem, "The recording \(file.lastPathComponent) cannot be written.", underlying: error)
            }
        }
        if let failure { throw failure }
    }

    /// A file's bytes.
    private static func contents(of file: URL, what: String) throws(NetworkError) -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            throw NetworkError(.fileSystem, "\(what) cannot be read.", underlying: error)
        }
    }

    /// The bytes of a request's body as they go on the wire: a file's and a multipart form's
    /// read here (the form's boundary is its own, so the wrapped transport sends the same bytes).
    private static func bodyBytes(of request: HTTPRequest) async throws(NetworkError) -> HTTPArchive.SentBody? {
        switch request.body {
        case .none, .form, .json, .data: return nil
        case .file, .multipart:
            let prepared = try await request.body.prepare()
            defer { prepared.discard() }
            switch prepared.content {
            case .none: return .init(bytes: Data(), contentType: prepared.contentType)
            case .data(let data): return .init(bytes: data, contentType: prepared.contentType)
            case .file(let url, _):
                return .init(bytes: try contents(of: url, what: "The body's file"), contentType: prepared.contentType)
            }
        }
    }
}
