import Courier
import Foundation

/// A request as a recording matches it: method, URL path, query pairs and body, each read
/// from the redacted archive form (so a hidden secret matches its own placeholder), with
/// volatile values left out. The query and a form are compared as sorted pairs, JSON as
/// values (key order and spacing aside), a multipart body without its random boundary.
struct RecordedRequest: Hashable {
    let method: String
    let path: String
    let query: [String]
    let body: String

    init(_ request: HTTPArchive.Request, volatile: (String) -> Set<String>) {
        method = request.method.uppercased()
        path = Self.path(of: request.url)
        let names = volatile(path)
        query = Self.pairs(request.queryString.map { ($0.name, $0.value) }, volatile: names)
        body = request.postData.map { Self.body($0, volatile: names) } ?? ""
    }

    /// The path of a URL's text, as sent: after `scheme://authority`, up to the query.
    static func path(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            rest = rest[(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)...]
        }
        let path = rest.prefix { $0 != "?" && $0 != "#" }
        return path.isEmpty ? "/" : String(path)
    }

    private static func pairs(_ pairs: [(String, String)], volatile: Set<String>) -> [String] {
        pairs.map { name, value in
            "\(name)=\(volatile.contains(name.lowercased()) ? "*" : value)"
        }.sorted()
    }

    private static func body(_ data: HTTPArchive.PostData, volatile: Set<String>) -> String {
        let type = data.mimeType.lowercased()
        if let boundary = data.multipartBoundary, let bytes = data.bytes {
            // Each form draws its own boundary: compared without it, byte for byte.
            let canonical = HTTPArchive.PostData(
                mimeType: "", bytes: bytes.replacing(boundary, with: Data("<boundary>".utf8)))
            return canonical.text
        }
        guard data.encoding == nil else { return data.text }
        if type.hasPrefix("application/json") || type.contains("+json"),
            let object = try? JSONSerialization.jsonObject(with: Data(data.text.utf8), options: .fragmentsAllowed),
            let canonical = try? JSONSerialization.data(
                withJSONObject: leavingOut(volatile, in: object), options: [.sortedKeys, .fragmentsAllowed])
        {
            return String(decoding: canonical, as: UTF8.self)
        }
        if type.hasPrefix("application/x-www-form-urlencoded") {
            let pairs = data.text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    PercentEncoding.decode(text.replacingOccurrences(of: "+", with: " "))
                }
                return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
            }
            return self.pairs(pairs, volatile: volatile).joined(separator: "&")
        }
        return data.text
    }

    private static func leavingOut(_ names: Set<String>, in object: Any) -> Any {
        if let dictionary = object as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, value) in dictionary {
                result[key] = names.contains(key.lowercased()) ? "*" : leavingOut(names, in: value)
            }
            return result
        }
        if let array = object as? [Any] { return array.map { leavingOut(names, in: $0) } }
        return object
    }

    /// How alike two requests are, for the closest one to an unmatched request.
    func likeness(to other: RecordedRequest) -> Int {
        var score = 0
        if method == other.method { score += 2 }
        if path == other.path { score += 4 }
        score += Set(query).intersection(other.query).count
        if body == other.body { score += 2 }
        return score
    }

    /// What differs between this request (sent) and a recorded one, a line for each part.
    func differences(from recorded: RecordedRequest) -> [String] {
        var lines: [String] = []
        if method != recorded.method { lines.append("method: sent \(method), recorded \(recorded.method)") }
        if path != recorded.path { lines.append("path: sent \(path), recorded \(recorded.path)") }
        let sentOnly = query.filter { !recorded.query.contains($0) }
        let recordedOnly = recorded.query.filter { !query.contains($0) }
        if !sentOnly.isEmpty || !recordedOnly.isEmpty {
            lines.append(
                "query: sent only \(Self.shown(sentOnly.joined(separator: "&"))), recorded only \(Self.shown(recordedOnly.joined(separator: "&")))"
            )
        }
        if body != recorded.body {
            lines.append("body: sent \(Self.shown(body)), recorded \(Self.shown(recorded.body))")
        }
        return lines
    }

    private static func shown(_ text: String) -> String {
        if text.isEmpty { return "(nothing)" }
        return text.count > 300 ? String(text.prefix(300)) + "… (\(text.count) characters)" : text
    }
}
