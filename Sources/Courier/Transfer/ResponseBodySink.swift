import Foundation

/// Collects an answer's body for a transport: in memory, or for a successful download in the
/// request's ``DownloadTarget`` file, reporting download progress as bytes arrive.
///
/// File writes are gathered into pieces of ``writeSize``: transports deliver 16 KB at a time,
/// and one system call per 16 KB writes at a fifth of the speed of 1 MB writes on this kind of
/// machine, too slow to keep up with loopback, so undelivered pieces would pile up in memory.
///
/// Not thread-safe: a transport feeds it from one place at a time (under its own lock).
final class ResponseBodySink {
    /// The size of one write to the file.
    static let writeSize = 1 << 20

    private let target: DownloadTarget?
    private let progress: ProgressReporter?
    private var file: FileHandle?
    /// The body in memory, or for a file the bytes not written yet.
    private var memory = Data()
    private var received: Int64 = 0
    private var expected: Int64?

    init(target: DownloadTarget?, progress: ProgressReporter?) {
        self.target = target
        self.progress = progress
    }

    deinit { try? file?.close() }

    /// Starts a body: opens the download file for a 2xx answer when the request has a target.
    /// - Parameters:
    ///   - status: The answer's status.
    ///   - headers: The answer's header fields.
    ///   - length: The body length the answer announced, if any.
    /// - Throws: ``NetworkError/Code/transport`` for a `206` that does not continue the file,
    ///   ``NetworkError/Code/fileSystem`` when the file cannot be opened.
    func begin(status: Int, headers: HTTPHeaders, length: Int64?) throws(NetworkError) {
        memory = Data()
        received = 0
        expected = length
        try? file?.close()
        file = nil
        guard let target, (200..<300).contains(status) else {
            if let length, length > 0, length < 64 << 20 { memory.reserveCapacity(Int(length)) }
            return
        }
        var start: Int64 = 0
        if status == 206 {
            let range = ContentRange(headers["Content-Range"])
            guard let range, range.first == target.offset else {
                throw NetworkError(
                    .transport,
                    "The server resumed at \(headers["Content-Range"] ?? "no Content-Range"), not at byte \(target.offset)."
                )
            }
            start = target.offset
            expected = range.total ?? length.map { $0 + start }
        }
        do {
            if !FileManager.default.fileExists(atPath: target.file.path) {
                _ = FileManager.default.createFile(atPath: target.file.path, contents: nil)
            }
            let handle = try FileHandle(forWritingTo: target.file)
            try handle.truncate(atOffset: UInt64(start))
            try handle.seek(toOffset: UInt64(start))
            file = handle
            memory.reserveCapacity(Self.writeSize)
        } catch {
            throw NetworkError(.fileSystem, "The download file could not be opened.", underlying: error)
        }
        received = start
        progress?.downloaded(received, of: expected)
    }

    /// Adds a piece of the body.
    /// - Throws: ``NetworkError/Code/fileSystem`` when the file cannot be written (a full disk).
    func append(_ data: Data) throws(NetworkError) {
        memory.append(data)
        received += Int64(data.count)
        if memory.count >= Self.writeSize { try flush() }
        progress?.downloaded(received, of: expected)
    }

    /// Writes the gathered bytes to the file, if the body goes to one.
    private func flush() throws(NetworkError) {
        guard let file, !memory.isEmpty else { return }
        do {
            try file.write(contentsOf: memory)
        } catch {
            throw NetworkError(.fileSystem, "The download could not be written to disk.", underlying: error)
        }
        memory.removeAll(keepingCapacity: true)
    }

    /// Ends the body, writing what is gathered (also after a failure, so a broken download
    /// keeps every byte that arrived).
    /// - Returns: The bytes kept in memory and the file written, if the body went to a file.
    /// - Throws: ``NetworkError/Code/fileSystem`` when the file cannot be written.
    func finish() throws(NetworkError) -> (body: Data, file: URL?) {
        guard let file else { return (memory, nil) }
        defer { self.file = nil }
        try flush()
        do {
            try file.synchronize()
            try file.close()
        } catch {
            throw NetworkError(.fileSystem, "The download could not be written to disk.", underlying: error)
        }
        return (Data(), target?.file)
    }
}

/// A parsed `Content-Range: bytes FIRST-LAST/TOTAL` (TOTAL may be `*`).
struct ContentRange: Hashable {
    let first: Int64
    let last: Int64
    let total: Int64?

    init?(_ value: String?) {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1)
        let bounds = halves.first?.split(separator: "-", maxSplits: 1) ?? []
        guard halves.count == 2, bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
            first <= last
        else { return nil }
        self.first = first
        self.last = last
        total = halves[1] == "*" ? nil : Int64(halves[1])
    }
}
