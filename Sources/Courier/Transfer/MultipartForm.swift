import Foundation

/// A `multipart/form-data` body: text fields and files, such as image and audio uploads.
///
/// ```swift
/// var form = MultipartForm(fields: ["title": "Holiday", "album": "7"])
/// form.append(name: "photo", fileAt: photoURL)                         // image/jpeg from ".jpg"
/// form.append(name: "voice", data: audio, filename: "note.m4a")
/// let task = client.upload(.post("media", body: .multipart(form)))
/// ```
///
/// Text fields stay structured like a form's parameters, so the common-parameters and signing
/// layers add to and sign them. Files are read only when the request is sent. A body up to
/// ``memoryThreshold`` is built in memory; a larger one is written to a temporary file and
/// streamed from it, and that file is removed after success, failure and cancellation.
///
/// The boundary is random (190 bits) and checked against the content while the body is built;
/// in the unlikely event that it occurs there, another is drawn. Names and filenames are sent
/// as UTF-8 with `"` escaped as `%22`; a CR, LF or NUL in them, or a control character in a
/// file's media type, is rejected with ``NetworkError/Code/invalidRequest`` before anything is
/// sent.
public struct MultipartForm: Sendable, Hashable {
    /// One file part.
    public struct File: Sendable, Hashable {
        /// Where a file's bytes come from.
        public enum Source: Sendable, Hashable {
            /// Bytes in memory.
            case data(Data)
            /// A file on disk, read in pieces when the request is sent.
            case file(URL)
        }

        /// The form field name.
        public var name: String
        /// The filename sent to the server.
        public var filename: String
        /// The media type of the content.
        public var contentType: String
        /// The content.
        public var source: Source

        /// Creates a file part.
        /// - Parameters:
        ///   - name: The form field name.
        ///   - filename: The filename sent to the server.
        ///   - contentType: The media type; guessed from the filename's extension when `nil`.
        ///   - source: The content.
        public init(name: String, filename: String, contentType: String? = nil, source: Source) {
            self.name = name
            self.filename = filename
            self.contentType = contentType ?? MediaTypes.guess(forFilename: filename)
            self.source = source
        }
    }

    /// The text fields, in order, sent before the files.
    public var fields: Parameters
    /// The file parts, in order.
    public var files: [File]
    /// The largest body (in bytes) built in memory; a larger one goes through a temporary file.
    /// 10 MB by default.
    public var memoryThreshold: Int64 = 10_000_000
    /// Where the temporary file of a large body is written; the system's temporary directory
    /// when `nil`.
    public var temporaryDirectory: URL?
    /// Draws a boundary; replaced only by tests that need a collision.
    var makeBoundary: @Sendable () -> String = MultipartForm.randomBoundary

    /// Creates a form.
    /// - Parameters:
    ///   - fields: Text fields, in order.
    ///   - files: File parts, in order.
    public init(fields: Parameters = [:], files: [File] = []) {
        self.fields = fields
        self.files = files
    }

    /// Whether two forms send the same fields and files with the same settings.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.fields == rhs.fields && lhs.files == rhs.files && lhs.memoryThreshold == rhs.memoryThreshold
            && lhs.temporaryDirectory == rhs.temporaryDirectory
    }

    /// Hashes the fields and files.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
        hasher.combine(files)
    }

    /// Appends a text field.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The text.
    public mutating func append(name: String, value: String) {
        fields.append(name: name, value: value)
    }

    /// Appends a file from memory.
    /// - Parameters:
    ///   - name: The form field name.
    ///   - data: The content.
    ///   - filename: The filename sent to the server.
    ///   - contentType: The media type; guessed from the filename's extension when `nil`.
    public mutating func append(name: String, data: Data, filename: String, contentType: String? = nil) {
        files.append(File(name: name, filename: filename, contentType: contentType, source: .data(data)))
    }

    /// Appends a file from disk, streamed when the request is sent.
    /// - Parameters:
    ///   - name: The form field name.
    ///   - url: The file's URL.
    ///   - filename: The filename sent to the server; the file's own name when `nil`.
    ///   - contentType: The media type; guessed from the filename's extension when `nil`.
    public mutating func append(name: String, fileAt url: URL, filename: String? = nil, contentType: String? = nil) {
        let sentName = filename ?? url.lastPathComponent
        files.append(File(name: name, filename: sentName, contentType: contentType, source: .file(url)))
    }

    /// Checks that every name, filename and media type can go in a part's header.
    /// - Throws: ``NetworkError/Code/invalidRequest`` for a CR, LF or NUL, or an empty name; for
    ///   a media type, any control character (it is a header value of its own).
    func validate() throws(NetworkError) {
        for file in files where !HTTPHeaders.isValid(HTTPHeaders.Field(name: "Content-Type", value: file.contentType)) {
            throw NetworkError(
                .invalidRequest, "The media type of the multipart file \(file.filename.debugDescription) is not valid.")
        }
        let names = fields.items.map { ("field name", $0.name) } + files.map { ("file field name", $0.name) }
        for (kind, name) in names + files.map({ ("filename", $0.filename) }) {
            guard !name.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                throw NetworkError(
                    .invalidRequest, "The multipart \(kind) \(name.debugDescription) contains CR, LF or NUL.")
            }
            guard kind == "filename" || !name.isEmpty else {
                throw NetworkError(.invalidRequest, "A multipart \(kind) is empty.")
            }
        }
    }

    /// `Courier-` and 32 random letters and digits (190 bits).
    @Sendable static func randomBoundary() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return "Courier-" + String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
    }
}

/// Media types guessed from a filename's extension, for uploads.
enum MediaTypes {
    /// The media type for a filename, `application/octet-stream` when unknown.
    static func guess(forFilename filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return fallback }
        return byExtension[filename[filename.index(after: dot)...].lowercased()] ?? fallback
    }

    static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "bmp": "image/bmp", "svg": "image/svg+xml",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "amr": "audio/amr", "ogg": "audio/ogg", "mp4": "video/mp4", "mov": "video/quicktime",
        "pdf": "application/pdf", "json": "application/json", "zip": "application/zip",
        "gz": "application/gzip", "txt": "text/plain", "csv": "text/csv", "html": "text/html",
    ]
}
