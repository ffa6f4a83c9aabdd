import Courier
import Foundation

extension LoopbackServer.Request {
    /// One part of a `multipart/form-data` body as the server received it.
    public struct Part: Sendable, Hashable {
        /// The part's header fields.
        public var headers: HTTPHeaders
        /// The `name` of its `Content-Disposition`, unescaped as sent.
        public var name: String?
        /// The `filename` of its `Content-Disposition`, when it is a file.
        public var filename: String?
        /// The content, byte for byte.
        public var content: Data

        /// The content read as UTF-8 text.
        public var text: String { String(decoding: content, as: UTF8.self) }
    }

    /// The boundary of a `multipart/form-data` body, from `Content-Type`.
    public var multipartBoundary: String? {
        guard let type = headers["Content-Type"], type.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in type.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// The parts of a `multipart/form-data` body, parsed strictly (RFC 7578): `nil` when the
    /// body is not well-formed multipart with the announced boundary.
    public var multipartParts: [Part]? {
        guard let boundary = multipartBoundary else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        let lineBreak = Data("\r\n".utf8)
        guard body.starts(with: delimiter + lineBreak) else { return nil }
        var parts: [Part] = []
        var cursor = body.startIndex + delimiter.count + lineBreak.count
        while true {
            guard let headEnd = body.range(of: lineBreak + lineBreak, in: cursor..<body.endIndex) else { return nil }
            let headText = String(decoding: body[cursor..<headEnd.lowerBound], as: UTF8.self)
            guard let next = body.range(of: lineBreak + delimiter, in: headEnd.upperBound..<body.endIndex) else {
                return nil
            }
            parts.append(Self.part(head: headText, content: Data(body[headEnd.upperBound..<next.lowerBound])))
            let after = body[next.upperBound...]
            if after.starts(with: Data("--\r\n".utf8)), after.count == 4 { return parts }
            guard after.starts(with: lineBreak) else { return nil }
            cursor = next.upperBound + lineBreak.count
        }
    }

    private static func part(head: String, content: Data) -> Part {
        var headers = HTTPHeaders()
        for line in head.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                name: String(line[..<colon]),
                value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let disposition = headers["Content-Disposition"] ?? ""
        return Part(
            headers: headers, name: quoted("name", in: disposition), filename: quoted("filename", in: disposition),
            content: content)
    }

    /// The value of `key="…"` in a header value. Searched as bytes: as characters, a quote
    /// followed by a combining mark would be one character, not a quote.
    private static func quoted(_ key: String, in value: String) -> String? {
        let bytes = Array(value.utf8)
        let marker = Array("; \(key)=\"".utf8)
        guard bytes.count >= marker.count,
            let start = (0...(bytes.count - marker.count)).first(where: {
                bytes[$0..<($0 + marker.count)].elementsEqual(marker)
            })
        else { return nil }
        let rest = bytes[(start + marker.count)...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: rest[..<end], as: UTF8.self)
    }
}
