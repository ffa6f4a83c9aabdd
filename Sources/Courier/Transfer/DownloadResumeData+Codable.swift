import Foundation

/// A resume saved across launches: `JSONEncoder().encode(resumeData)` and back.
///
/// What is stored is the endpoint (method, path, query, headers, body, timeout, limits, the
/// layers it skips), the destination and its policy, and the partial file with what is known
/// of it. An endpoint whose body is JSON or multipart cannot be stored (encoding throws), since
/// its bytes depend on the client's encoder or on files. Decoding data written by another
/// version of this format throws `DecodingError.dataCorrupted`. The partial file itself is not
/// checked until the download resumes: one that is gone or shorter than ``bytesReceived`` then
/// fails with ``NetworkError/Code/fileSystem``, and the `If-Range` validator makes the server
/// send the whole resource again when it changed. Stored data whose partial file is not a
/// hidden file beside the destination, named as Courier names it, is refused when decoded.
///
/// Everything else is used as stored: the endpoint (its URL, which may name any host, its
/// headers and its body, a file body among them) goes out again with the client's token and
/// signature, and the destination is written (replaced, with ``OverwritePolicy/replace``).
/// Keep resume data where the app keeps its own data.
extension DownloadResumeData: Codable {
    private static let formatVersion = 1

    private enum CodingKeys: String, CodingKey {
        case version, endpoint, destination, overwrite, partialFile, bytesReceived, validator, acceptsRanges
    }

    /// Decodes resume data that ``encode(to:)`` wrote.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError`, also for data of another format version.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription: "Resume data of format \(version) is not readable here.")
        }
        let overwrite = try container.decode(String.self, forKey: .overwrite)
        guard let policy = ["fail": OverwritePolicy.fail, "replace": .replace][overwrite] else {
            throw DecodingError.dataCorruptedError(
                forKey: .overwrite, in: container, debugDescription: "Unknown overwrite policy \(overwrite).")
        }
        let destination = try container.decode(URL.self, forKey: .destination)
        let partialFile = try container.decode(URL.self, forKey: .partialFile)
        // The partial file, which Courier creates, truncates and removes, must be a hidden file
        // beside the destination, named as Courier names them: stored data that points
        // elsewhere (another folder, through `..` or not) is refused.
        guard destination.isFileURL, partialFile.isFileURL,
            !partialFile.pathComponents.contains(".."), !destination.pathComponents.contains(".."),
            partialFile.deletingLastPathComponent().standardizedFileURL.path
                == destination.deletingLastPathComponent().standardizedFileURL.path,
            partialFile.lastPathComponent.hasPrefix(".\(destination.lastPathComponent).courier-download-")
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .partialFile, in: container,
                debugDescription: "The partial file is not a hidden file beside the destination.")
        }
        self.init(
            endpoint: try container.decode(EndpointRecord.self, forKey: .endpoint).endpoint(),
            destination: destination, overwrite: policy, partialFile: partialFile,
            bytesReceived: try container.decode(Int64.self, forKey: .bytesReceived),
            validator: try container.decodeIfPresent(String.self, forKey: .validator),
            acceptsRanges: try container.decode(Bool.self, forKey: .acceptsRanges))
    }

    /// Encodes the resume data.
    /// - Parameter encoder: The encoder.
    /// - Throws: `EncodingError.invalidValue` for an endpoint with a JSON or multipart body.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .version)
        try container.encode(EndpointRecord(endpoint, codingPath: container.codingPath), forKey: .endpoint)
        try container.encode(destination, forKey: .destination)
        let policy =
            switch overwrite {
            case .fail: "fail"
            case .replace: "replace"
            }
        try container.encode(policy, forKey: .overwrite)
        try container.encode(partialFile, forKey: .partialFile)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encodeIfPresent(validator, forKey: .validator)
        try container.encode(acceptsRanges, forKey: .acceptsRanges)
    }
}

/// A download endpoint as stored data.
private struct EndpointRecord: Codable {
    struct Pair: Codable {
        var name: String
        var value: String
        /// A query pair as written in a URL, kept so it goes on the wire unchanged.
        var written: String?
    }

    var method: String
    var path: String
    var query: [Pair]
    var headers: [Pair]
    /// `none`, `form`, `data` or `file`.
    var bodyKind: String
    var form: [Pair]?
    var data: Data?
    var file: URL?
    var contentType: String?
    var timeout: Duration?
    var isIdempotent: Bool
    var skippedLayers: [String]
    var maximumResponseBodySize: Int64?

    init(_ download: DownloadEndpoint, codingPath: [any CodingKey]) throws {
        let endpoint = download.endpoint
        method = endpoint.method.rawValue
        path = endpoint.path
        query = endpoint.query.items.map { Pair(name: $0.name, value: $0.value, written: $0.written) }
        headers = endpoint.headers.fields.map { Pair(name: $0.name, value: $0.value) }
        switch endpoint.body {
        case .none:
            bodyKind = "none"
        case .form(let parameters):
            bodyKind = "form"
            form = parameters.items.map { Pair(name: $0.name, value: $0.value, written: $0.written) }
        case .data(let bytes, let type):
            bodyKind = "data"
            data = bytes
            contentType = type
        case .file(let url, let type):
            bodyKind = "file"
            file = url
            contentType = type
        case .json, .multipart:
            throw EncodingError.invalidValue(
                endpoint.body,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "A download with a JSON or multipart body cannot be stored."))
        }
        timeout = endpoint.timeout
        isIdempotent = endpoint.isIdempotent
        skippedLayers = endpoint.skippedLayers.map(\.rawValue).sorted()
        maximumResponseBodySize = endpoint.maximumResponseBodySize
    }

    func endpoint() throws -> DownloadEndpoint {
        var endpoint = Endpoint<DownloadedFile>(
            method: HTTPMethod(method), path: path, query: Self.parameters(query), body: try body(),
            headers: HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) }), timeout: timeout,
            decoding: .toFile)
        endpoint.isIdempotent = isIdempotent
        endpoint.skippedLayers = Set(skippedLayers.map(InterceptorLayer.init(rawValue:)))
        endpoint.maximumResponseBodySize = maximumResponseBodySize
        return DownloadEndpoint(endpoint)
    }

    private func body() throws -> RequestBody {
        switch bodyKind {
        case "none": return .none
        case "form": return .form(Self.parameters(form ?? []))
        case "data":
            guard let data, let contentType else { throw Self.corrupt("a data body without its bytes or type") }
            return .data(data, contentType: contentType)
        case "file":
            guard let file, let contentType else { throw Self.corrupt("a file body without its file or type") }
            return .file(file, contentType: contentType)
        default: throw Self.corrupt("a body of kind \(bodyKind)")
        }
    }

    /// The parameters; a pair's written form is kept only when it is one pair of visible
    /// ASCII without `#` that reads back as its name and value, so stored text cannot add,
    /// hide or cut off parameters.
    private static func parameters(_ pairs: [Pair]) -> Parameters {
        Parameters(
            pairs.map { pair in
                var item = Parameters.Item(name: pair.name, value: pair.value)
                if let written = pair.written,
                    written.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x23 && $0 != 0x26 }),
                    let read = Parameters.decoding(Substring(written)).items.first,
                    read.name == pair.name, read.value == pair.value
                {
                    item.written = written
                }
                return item
            })
    }

    private static func corrupt(_ what: String) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: [], debugDescription: "The resume data holds \(what)."))
    }
}
