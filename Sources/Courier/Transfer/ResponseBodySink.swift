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
    private let memoryLimit: Int64?
    private let decodesContent: Bool
    private var file: FileHandle?
    /// The body in memory, or for a file the bytes not written yet.
    private var memory = Data()
    private var received: Int64 = 0
    private var expected: Int64?
    /// The body bytes of this answer so far, and the most it may have.
    private var bodyBytes: Int64 = 0
    private var limit: Int64?
    /// For a `206`, the file's size once the range has arrived whole.
    private var rangeEnd: Int64?

    /// - Parameters:
    ///   - request: Where a successful answer goes (``HTTPRequest/download``), where progress
    ///     is reported, and the most bytes a body may have (``HTTPRequest/maximumResponseBodySize``
    ///     for bodies in memory, ``DownloadTarget/maximumSize`` for a download's file).
    ///   - decodesContent: Whether the transport decodes a `Content-Encoding` before the bytes
    ///     come here (then lengths and ranges, which count the bytes as sent, do not apply).
    init(for request: HTTPRequest, decodesContent: Bool) {
        self.target = request.download
        self.progress = request.progress
        self.memoryLimit = request.maximumResponseBodySize
        self.decodesContent = decodesContent
    }

    deinit { try? file?.close() }

    /// Starts a body: checks the answer's framing and announced size, and opens the download
    /// file for a 2xx answer when the request has a target.
    /// - Parameters:
    ///   - status: The answer's status.
    ///   - headers: The answer's header fields.
    /// - Throws: ``NetworkError/Code/transport`` for an ambiguous `Content-Length` or a `206`
    ///   that does not continue the file, ``NetworkError/Code/responseTooLarge`` for a body
    ///   announced larger than the limit, ``NetworkError/Code/fileSystem`` when the file cannot
    ///   be opened.
    func begin(status: Int, headers: HTTPHeaders) throws(NetworkError) {
        memory = Data()
        received = 0
        bodyBytes = 0
        rangeEnd = nil
        try? file?.close()
        file = nil
        var headerSize = 0
        for field in headers { headerSize += field.name.utf8.count + field.value.utf8.count + 4 }
        guard headerSize <= HTTPResponse.maximumHeaderSize else {
            throw NetworkError(
                .responseTooLarge, "The answer's header is larger than \(HTTPResponse.maximumHeaderSize) bytes.")
        }
        let length = try headers.contentLength()
        let toFile = target != nil && (200..<300).contains(status)
        limit = toFile ? target?.maximumSize : memoryLimit
        // A decoded body is counted as it comes, so only the length of bytes as sent is checked early.
        let decoded = decodesContent && headers["Content-Encoding"].map { $0.lowercased() != "identity" } ?? false
        if let length, let limit, length > limit, !decoded { throw Self.tooLarge(limit) }
        expected = decoded ? nil : length
        guard toFile, let target else {
            // Never trust an announced length with memory: reserve a little, grow as bytes come.
            if let length, length > 0 { memory.reserveCapacity(Int(min(length, 1 << 20))) }
            return
        }
        var start: Int64 = 0
        if status == 206 {
            // Ranges count the bytes as sent: a decoded body would land at the wrong offsets.
            guard !decoded else {
                throw NetworkError(.transport, "The server resumed with a Content-Encoding, so bytes cannot be placed.")
            }
            let range = try ContentRange.continuing(headers["Content-Range"], at: target.offset, length: length)
            start = target.offset
            // `continuing` checked that a total, when given, is exactly this.
            rangeEnd = range.last + 1
            expected = rangeEnd
        }
        let handle: FileHandle
        if start == 0 {
            handle = try PrivateFile.create(at: target.file)
        } else {
            handle = try PrivateFile.openExisting(at: target.file)
            // A partial file shorter than the offset would be filled with zeros.
            guard let size = try? handle.seekToEnd(), size >= UInt64(start) else {
                try? handle.close()
                throw NetworkError(
                    .fileSystem, "The partial download is shorter than the \(start) bytes it should hold.")
            }
        }
        do {
            try handle.truncate(atOffset: UInt64(start))
            try handle.seek(toOffset: UInt64(start))
            file = handle
            memory.reserveCapacity(Self.writeSize)
        } catch {
            throw NetworkError(.fileSystem, "The download file could not be prepared.", underlying: error)
        }
        received = start
        progress?.downloaded(received, of: expected)
    }

    static func tooLarge(_ limit: Int64) -> NetworkError {
        NetworkError(.responseTooLarge, "The answer's body is larger than the limit of \(limit) bytes.")
    }

    /// Adds a piece of the body.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` past the limit,
    ///   ``NetworkError/Code/fileSystem`` when the file cannot be written (a full disk).
    func append(_ data: Data) throws(NetworkError) {
        bodyBytes += Int64(data.count)
        if let limit, bodyBytes > limit { throw Self.tooLarge(limit) }
        if let rangeEnd, received + Int64(data.count) > rangeEnd { throw Self.rangeMismatch }
        memory.append(data)
        received += Int64(data.count)
        if memory.count >= Self.writeSize { try flush() }
        progress?.downloaded(received, of: expected)
    }

    /// Whether the body goes to a file (so ``finish()`` writes and syncs it).
    var writesFile: Bool { file != nil }

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
    /// - Throws: ``NetworkError/Code/fileSystem`` when the file cannot be written,
    ///   ``NetworkError/Code/transport`` when a `206` brought fewer bytes than its range.
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
        // A chunked body (or HTTP/2) can end cleanly before the range it announced.
        if let rangeEnd, received != rangeEnd { throw Self.rangeMismatch }
        return (Data(), target?.file)
    }

    private static let rangeMismatch = NetworkError(
        .transport, "The resumed body does not fill the range its Content-Range announced.")
}

/// A parsed `Content-Range: bytes FIRST-LAST/TOTAL` (TOTAL may be `*`).
struct ContentRange: Hashable {
    let first: Int64
    let last: Int64
    let total: Int64?

    init?(_ value: String?) {
        guard let value, value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bounds = halves.first?.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false) ?? []
        guard halves.count == 2, bounds.count == 2, let first = Self.number(bounds[0]),
            let last = Self.number(bounds[1]), first <= last
        else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            total = nil
        } else {
            // The total must be a number past the range's last byte.
            guard let total = Self.number(halves[1]), total > last else { return nil }
            self.total = total
        }
    }

    /// Digits only (`Int64` would also take a sign), within `Int64`.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// The range of a `206` that continues a file at `offset` to its end (the request asked
    /// for `bytes=OFFSET-`), checked against the body's announced length.
    /// - Throws: ``NetworkError/Code/transport`` when the range is missing, malformed, starts
    ///   elsewhere, stops before the end it names, or disagrees with `length`.
    static func continuing(_ value: String?, at offset: Int64, length: Int64?) throws(NetworkError) -> ContentRange {
        // A range that runs to the last byte Int64 can name has no end to check the body against.
        guard let range = ContentRange(value), range.first == offset, range.last < .max,
            range.total == nil || range.total == range.last &+ 1,
            length == nil || length == range.last - range.first &+ 1
        else {
            let shown = value.map { String($0.prefix(100)) } ?? "no Content-Range"
            throw NetworkError(
                .transport,
                "The server resumed with \(shown) (length \(length.map(String.init) ?? "unknown")), not at byte \(offset)."
            )
        }
        return range
    }
}

extension HTTPHeaders {
    /// The body length an answer announces, read as RFC 9112 says: ignored when
    /// `Transfer-Encoding` is present; every `Content-Length` value (also comma-separated
    /// ones, as `URLSession` joins repeated fields) must be the same number.
    /// - Throws: ``NetworkError/Code/transport`` for differing or non-numeric values.
    func contentLength() throws(NetworkError) -> Int64? {
        guard self["Transfer-Encoding"] == nil else { return nil }
        var length: Int64?
        for field in fields where field.name.caseInsensitiveEquals("Content-Length") {
            for part in field.value.utf8.split(separator: UInt8(ascii: ",")) {
                // Optional whitespace is spaces and tabs (RFC 9110), trimmed on the bytes.
                let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
                let start = part.firstIndex { !isSpace($0) } ?? part.endIndex
                let end = part.lastIndex { !isSpace($0) }.map(part.index(after:)) ?? start
                let digits = part[start..<end]
                guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                    let value = Int64(String(decoding: digits, as: UTF8.self)), length == nil || length == value
                else {
                    throw NetworkError(
                        .transport, "The answer's Content-Length is not one number, so its end cannot be told.")
                }
                length = value
            }
        }
        return length
    }
}

extension HTTPResponse {
    /// An answer a transport made without the wire (a recording's), delivered as a transport
    /// delivers one: a successful download written to the request's file, and the request's
    /// size limits kept.
    /// - Throws: ``NetworkError/Code/responseTooLarge`` past a limit,
    ///   ``NetworkError/Code/fileSystem`` when the file cannot be written.
    package static func delivered(status: Int, headers: HTTPHeaders, body: Data, for request: HTTPRequest)
        throws(NetworkError) -> HTTPResponse
    {
        let sink = ResponseBodySink(for: request, decodesContent: true)
        try sink.begin(status: status, headers: headers)
        if !body.isEmpty { try sink.append(body) }
        let (kept, file) = try sink.finish()
        var response = HTTPResponse(status: status, headers: headers, body: kept, url: try? request.wireURL())
        response.bodyFile = file
        return response
    }
}
