import Foundation

/// HTTP traffic in the HAR 1.2 format (HTTP Archive), which browsers' developer tools, Charles
/// and Proxyman open: what ``NetworkClient/recentTraffic()`` exports, and what a recording of a
/// backend for tests is kept in.
///
/// ```swift
/// let archive = client.recentTraffic()
/// try archive.jsonData().write(to: reportFolder.appending(path: "traffic.har"))
/// ```
///
/// ``jsonData()`` writes keys in a fixed order, so two recordings of the same traffic differ
/// only where the traffic does. Bodies are text, or base64 (`encoding` says so) when they are
/// not UTF-8. Every exchange Courier writes has had its secrets hidden first (see
/// ``Redactor``).
public struct HTTPArchive: Sendable, Hashable, Codable {
    /// The archive's one field, as the format has it.
    public var log: Log

    /// Creates an archive.
    /// - Parameter entries: The exchanges, in the order they began.
    public init(entries: [Entry] = []) {
        self.log = Log(entries: entries)
    }

    /// The exchanges, in the order they began.
    public var entries: [Entry] {
        get { log.entries }
        set { log.entries = newValue }
    }

    /// Reads an archive.
    /// - Parameter jsonData: The text of a HAR file.
    /// - Throws: ``NetworkError/Code/decodingFailed`` when it is not a HAR 1.x archive.
    public init(jsonData: Data) throws(NetworkError) {
        do {
            self = try JSONDecoder().decode(HTTPArchive.self, from: jsonData)
        } catch {
            throw NetworkError(.decodingFailed, "This is not an HTTP archive (HAR 1.2): \(error)")
        }
        guard log.version.hasPrefix("1.") else {
            throw NetworkError(.decodingFailed, "HAR version \(log.version.debugDescription) is not 1.x.")
        }
    }

    /// The archive as HAR text: UTF-8 JSON, indented, keys in a fixed order.
    /// - Returns: The text.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Every field is a string, a number or a list of them: encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The archive's log: who wrote it and the exchanges.
    public struct Log: Sendable, Hashable, Codable {
        /// The format's version, `1.2`.
        public var version: String
        /// The program that wrote it.
        public var creator: Creator
        /// The exchanges.
        public var entries: [Entry]

        /// Creates a log written by Courier.
        /// - Parameter entries: The exchanges.
        public init(entries: [Entry]) {
            self.version = "1.2"
            self.creator = Creator(name: "Courier", version: "1")
            self.entries = entries
        }
    }

    /// The program that wrote an archive.
    public struct Creator: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// Its version.
        public var version: String

        /// Creates a creator.
        /// - Parameters:
        ///   - name: The program's name.
        ///   - version: Its version.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// One exchange: a request and its answer.
    public struct Entry: Sendable, Hashable, Codable {
        /// When the request began, in ISO 8601 with milliseconds.
        public var startedDateTime: String
        /// How long the exchange took in all, in milliseconds.
        public var time: Double
        /// The request.
        public var request: Request
        /// The answer.
        public var response: Response
        /// What the cache did (always empty: Courier's cache sits above the transport).
        public var cache: Cache
        /// How long each phase took.
        public var timings: Timings
        /// A note.
        public var comment: String?

        /// Creates an entry.
        /// - Parameters:
        ///   - startedDateTime: When it began (ISO 8601).
        ///   - time: How long it took in all, in milliseconds.
        ///   - request: The request.
        ///   - response: The answer.
        ///   - timings: The phases.
        public init(startedDateTime: String, time: Double, request: Request, response: Response, timings: Timings) {
            self.startedDateTime = startedDateTime
            self.time = time
            self.request = request
            self.response = response
            self.cache = Cache()
            self.timings = timings
        }
    }

    /// A request as it went on the wire.
    public struct Request: Sendable, Hashable, Codable {
        /// The method.
        public var method: String
        /// The whole URL, query included.
        public var url: String
        /// The HTTP version, such as `HTTP/1.1`.
        public var httpVersion: String
        /// Cookies (Courier leaves them in ``headers``).
        public var cookies: [NameValue]
        /// The header fields, in order.
        public var headers: [NameValue]
        /// The query's pairs, decoded.
        public var queryString: [NameValue]
        /// The body, if there was one.
        public var postData: PostData?
        /// The header block's size in bytes; -1 when not known.
        public var headersSize: Int
        /// The body's size in bytes; -1 when not known.
        public var bodySize: Int

        /// Creates a request.
        /// - Parameters:
        ///   - method: The method.
        ///   - url: The URL.
        ///   - headers: The header fields.
        ///   - queryString: The query's pairs.
        ///   - postData: The body.
        ///   - bodySize: The body's size; -1 when not known.
        public init(
            method: String, url: String, headers: [NameValue], queryString: [NameValue], postData: PostData?,
            bodySize: Int
        ) {
            self.method = method
            self.url = url
            self.httpVersion = "HTTP/1.1"
            self.cookies = []
            self.headers = headers
            self.queryString = queryString
            self.postData = postData
            self.headersSize = -1
            self.bodySize = bodySize
        }
    }

    /// An answer as it came off the wire (its body decoded from `gzip` and the like).
    public struct Response: Sendable, Hashable, Codable {
        /// The status code.
        public var status: Int
        /// The reason phrase (Courier writes the standard one).
        public var statusText: String
        /// The HTTP version, such as `HTTP/1.1`.
        public var httpVersion: String
        /// Cookies (Courier leaves them in ``headers``).
        public var cookies: [NameValue]
        /// The header fields, in order.
        public var headers: [NameValue]
        /// The body.
        public var content: Content
        /// The `Location` of a redirect, or empty.
        public var redirectURL: String
        /// The header block's size in bytes; -1 when not known.
        public var headersSize: Int
        /// The body's size in bytes as received; -1 when not known.
        public var bodySize: Int

        /// Creates an answer.
        /// - Parameters:
        ///   - status: The status code.
        ///   - httpVersion: The HTTP version.
        ///   - headers: The header fields.
        ///   - content: The body.
        public init(status: Int, httpVersion: String, headers: [NameValue], content: Content) {
            self.status = status
            self.statusText = HTTPArchive.reasonPhrases[status] ?? ""
            self.httpVersion = httpVersion
            self.cookies = []
            self.headers = headers
            self.content = content
            self.redirectURL = headers.first { $0.name.lowercased() == "location" }?.value ?? ""
            self.headersSize = -1
            self.bodySize = content.size
        }
    }

    /// The reason phrases Courier writes.
    static let reasonPhrases: [Int: String] = [
        200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
        301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
        308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content", 429: "Too Many Requests",
        500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}

extension HTTPArchive {
    /// A name and a value: a header field or a query pair.
    public struct NameValue: Sendable, Hashable, Codable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        /// - Parameters:
        ///   - name: The name.
        ///   - value: The value.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request's body.
    public struct PostData: Sendable, Hashable, Codable {
        /// Its media type.
        public var mimeType: String
        /// Its text, or its bytes in base64 when ``encoding`` is `base64`.
        public var text: String
        /// `base64` for bytes that are not UTF-8 text; `nil` for text.
        public var encoding: String?

        enum CodingKeys: String, CodingKey {
            case mimeType, text
            // Not in HAR 1.2, which keeps request bodies as text: a custom field starts with `_`.
            case encoding = "_encoding"
        }

        /// Creates a body.
        /// - Parameters:
        ///   - mimeType: Its media type.
        ///   - bytes: Its bytes, kept as text when they are UTF-8 and base64 otherwise.
        public init(mimeType: String, bytes: Data) {
            self.mimeType = mimeType
            (text, encoding) = ArchiveText.encode(bytes)
        }

        /// The body's bytes, or `nil` when its base64 is broken.
        public var bytes: Data? { ArchiveText.decode(text, encoding: encoding) }
    }

    /// An answer's body.
    public struct Content: Sendable, Hashable, Codable {
        /// Its size in bytes.
        public var size: Int
        /// Its media type.
        public var mimeType: String
        /// Its text, or its bytes in base64 when ``encoding`` is `base64`.
        public var text: String?
        /// `base64` for bytes that are not UTF-8 text; `nil` for text.
        public var encoding: String?
        /// A note, such as why the body is not here.
        public var comment: String?
        /// For a body read as a stream, the pieces it arrived in, in order; their sizes add up
        /// to the body's. Not in HAR 1.2: a custom field, `_chunks`.
        public var chunks: [Chunk]?
        /// For a stream that failed after its head, what ended it, its secrets hidden. A custom
        /// field, `_streamError`.
        public var streamError: String?
        /// For a stream that failed after its head, the code of the error that ended it
        /// (``NetworkError/Code``). A custom field, `_streamErrorCode`.
        public var streamErrorCode: String?

        enum CodingKeys: String, CodingKey {
            case size, mimeType, text, encoding, comment
            case chunks = "_chunks"
            case streamError = "_streamError"
            case streamErrorCode = "_streamErrorCode"
        }

        /// Creates a body.
        /// - Parameters:
        ///   - mimeType: Its media type.
        ///   - bytes: Its bytes, kept as text when they are UTF-8 and base64 otherwise.
        public init(mimeType: String, bytes: Data) {
            self.size = bytes.count
            self.mimeType = mimeType
            let (text, encoding) = ArchiveText.encode(bytes)
            self.text = text
            self.encoding = encoding
        }

        /// The body's bytes: empty without a text, `nil` when its base64 is broken.
        public var bytes: Data? { text.map { ArchiveText.decode($0, encoding: encoding) } ?? Data() }
    }

    /// One piece of a body read as a stream.
    public struct Chunk: Sendable, Hashable, Codable {
        /// When it arrived, in milliseconds after the answer's head.
        public var time: Double
        /// Its size in bytes.
        public var size: Int

        /// Creates a piece.
        /// - Parameters:
        ///   - time: When it arrived, in milliseconds after the head.
        ///   - size: Its size in bytes.
        public init(time: Double, size: Int) {
            self.time = time
            self.size = size
        }
    }

    /// What the cache did; Courier leaves it empty.
    public struct Cache: Sendable, Hashable, Codable {
        /// Creates an empty record.
        public init() {}
    }

    /// How long each phase of an exchange took, in milliseconds; -1 for a phase that did not
    /// happen or was not measured.
    public struct Timings: Sendable, Hashable, Codable {
        /// Waiting for a connection.
        public var blocked: Double
        /// Resolving the host name.
        public var dns: Double
        /// Connecting, TLS included.
        public var connect: Double
        /// Sending the request.
        public var send: Double
        /// Waiting for the first byte of the answer.
        public var wait: Double
        /// Receiving the answer.
        public var receive: Double
        /// The TLS handshake.
        public var ssl: Double

        /// Creates timings.
        /// - Parameters:
        ///   - blocked: Waiting for a connection.
        ///   - dns: Resolving the name.
        ///   - connect: Connecting.
        ///   - send: Sending.
        ///   - wait: Waiting for the first byte.
        ///   - receive: Receiving.
        ///   - ssl: The TLS handshake.
        public init(
            blocked: Double = -1, dns: Double = -1, connect: Double = -1, send: Double, wait: Double,
            receive: Double, ssl: Double = -1
        ) {
            self.blocked = blocked
            self.dns = dns
            self.connect = connect
            self.send = send
            self.wait = wait
            self.receive = receive
            self.ssl = ssl
        }
    }
}

/// Bodies in an archive: UTF-8 text as it is, other bytes in base64.
enum ArchiveText {
    static func encode(_ bytes: Data) -> (text: String, encoding: String?) {
        if let text = String(bytes: bytes, encoding: .utf8), !text.utf8.contains(0) { return (text, nil) }
        return (bytes.base64EncodedString(), "base64")
    }

    static func decode(_ text: String, encoding: String?) -> Data? {
        encoding == "base64" ? Data(base64Encoded: text) : Data(text.utf8)
    }
}
