import Foundation

/// A request body made ready for the wire: bytes in memory or a file to stream, with its media
/// type. Transports get one from ``HTTPBody/prepare()`` and call ``discard()`` once the
/// transfer has ended, whatever the outcome, so a temporary file never outlives its request.
public struct PreparedBody: Sendable {
    /// What goes on the wire.
    public enum Content: Sendable {
        /// No body.
        case none
        /// Bytes in memory.
        case data(Data)
        /// A file streamed from disk, with its length for `Content-Length`.
        case file(URL, length: Int64)
    }

    /// What goes on the wire.
    public var content: Content { fields.value.content }
    /// The `Content-Type` for the body, or `nil` when there is none.
    public var contentType: String? { fields.value.contentType }
    /// A file written for this request only, removed by ``discard()``.
    var temporaryFile: URL? { fields.value.temporaryFile }

    /// The stored properties, out of line (see ``CopyOnWrite``).
    private let fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        let content: Content
        let contentType: String?
        let temporaryFile: URL?
    }

    @inline(never)  // Else its fields take room in each `async` caller's frame (see `CopyOnWrite`).
    init(_ content: Content, contentType: String?, temporaryFile: URL? = nil) {
        fields = CopyOnWrite(Fields(content: content, contentType: contentType, temporaryFile: temporaryFile))
    }

    /// The number of bytes that go on the wire.
    public var length: Int64 {
        switch content {
        case .none: 0
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        }
    }

    /// Removes the temporary file this body was written to, if any.
    public func discard() {
        if let temporaryFile { try? FileManager.default.removeItem(at: temporaryFile) }
    }
}

extension HTTPBody {
    /// Makes the body ready for the wire: forms and JSON as bytes, a file as it is, a multipart
    /// form in memory or (above its threshold) in a temporary file. File work runs on a
    /// Dispatch thread, never on Swift's cooperative pool, and stops when the task is cancelled.
    /// - Returns: The body; call ``PreparedBody/discard()`` when the transfer has ended.
    /// - Throws: ``NetworkError/Code/invalidRequest`` for a missing or unreadable file,
    ///   ``NetworkError/Code/fileSystem`` when the temporary file cannot be written,
    ///   ``NetworkError/Code/cancelled``.
    public func prepare() async throws(NetworkError) -> PreparedBody {
        switch self {
        case .none: return PreparedBody(.none, contentType: nil)
        case .form, .json, .data: return PreparedBody(.data(encoded ?? Data()), contentType: contentType)
        case .file(let url, let contentType):
            let length = try FileSource.length(of: url)
            return PreparedBody(.file(url, length: length), contentType: contentType)
        case .multipart(let form): return try await Self.encode(form)
        }
    }

    /// A multipart form encoded on a Dispatch thread. Not inlined: a request waiting in flight
    /// keeps the frame of each function it waits in, and most requests never come here.
    @inline(never)
    private static func encode(_ form: MultipartForm) async throws(NetworkError) -> PreparedBody {
        try await Blocking.run { flag throws(NetworkError) in
            try MultipartEncoder(form: form, cancellation: flag).encode()
        }
    }
}

/// Checks on files a request reads.
enum FileSource {
    /// The size of a regular, readable file.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when it is missing, not a regular file or
    ///   unreadable.
    static func length(of url: URL) throws(NetworkError) -> Int64 {
        guard url.isFileURL else {
            throw NetworkError(.invalidRequest, "\(url.absoluteString) is not a file URL.")
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard let attributes, attributes[.type] as? FileAttributeType == .typeRegular,
            FileManager.default.isReadableFile(atPath: url.path)
        else {
            throw NetworkError(.invalidRequest, "The file \(url.lastPathComponent) is missing or cannot be read.")
        }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// Runs blocking file work on a Dispatch thread, so it never holds one of Swift's cooperative
/// threads, and turns cancellation of the calling task into a flag the work polls.
enum Blocking {
    /// A cancellation flag shared with blocking work.
    ///
    /// `@unchecked Sendable`: the flag is guarded by `lock`.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false

        /// Whether the calling task was cancelled.
        var isCancelled: Bool { lock.withLock { raised } }

        func raise() { lock.withLock { raised = true } }

        /// Takes the lock once: by the worker before it hands its result over, and by the task
        /// when its `await` returns, so the thread sanitizer sees the result's writes ordered
        /// before the task's reads (the runtime's hand-over of a continuation's value shows it
        /// none when the task had not yet begun to wait).
        func settle() { lock.withLock {} }

        /// Throws ``NetworkError/Code/cancelled`` when the flag is raised.
        func check() throws(NetworkError) {
            if isCancelled { throw NetworkError(.cancelled, "The transfer was cancelled.") }
        }
    }

    static func run<T: Sendable>(_ work: @escaping @Sendable (Flag) throws(NetworkError) -> T)
        async throws(NetworkError) -> T
    {
        let flag = Flag()
        let result: Result<T, NetworkError> = await withTaskCancellationHandler {
            defer { flag.settle() }
            return await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    let result = Result { () throws(NetworkError) in try work(flag) }
                    flag.settle()
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            flag.raise()
        }
        return try result.get()
    }
}

extension PreparedBody: CustomReflectable {
    /// Its stored properties, for `print`, `dump` and the debugger.
    public var customMirror: Mirror { fields.mirror(of: self) }
}
