/// Removes `.` and `..` segments from a URL path (RFC 3986, section 5.2.4).
///
/// libcurl does this to every path before sending it, on both transports (URLSession on Linux
/// is libcurl underneath), and cannot be told not to through URLSession. Courier does it first,
/// in ``HTTPRequest/wireURL()``, so the path a signature covers is the path that is sent.
///
/// An encoded dot counts as a dot (`%2E%2E` is `..`, RFC 3986 section 6.2.2.2): libcurl 8.13
/// and later read it so, older ones and many servers do not, so Courier sends neither form and
/// every peer sees the same path.
enum DotSegments {
    /// Whether `path` may hold a dot-segment (`/.` or `/%2E` somewhere).
    static func mayHoldDotSegment(_ path: String) -> Bool {
        // On the bytes in place: Foundation's `contains` goes through NSString, on every request's path.
        var path = path
        return path.withUTF8 { bytes in
            guard bytes.count >= 2 else { return false }
            for index in 0..<bytes.count - 1 where bytes[index] == UInt8(ascii: "/") {
                if bytes[index + 1] == UInt8(ascii: ".") { return true }
                if index + 3 < bytes.count, bytes[index + 1] == UInt8(ascii: "%"),
                    bytes[index + 2] == UInt8(ascii: "2"),
                    bytes[index + 3] | 0x20 == UInt8(ascii: "e")
                {
                    return true
                }
            }
            return false
        }
    }

    /// `path` without dot-segments. A path that does not start with `/` (or holds no
    /// dot-segment) is returned as it is.
    /// - Parameter path: A percent-encoded absolute path, for example `/a/b/../c`.
    /// - Returns: The path without dot-segments, for example `/a/c`.
    static func removed(from path: String) -> String {
        guard path.hasPrefix("/"), mayHoldDotSegment(path) else { return path }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch dots(in: segment) {
            case ".":
                break
            case "..":
                // Never above the root: `/../x` is `/x`.
                if !output.isEmpty { output.removeLast() }
            default:
                output.append(segment)
                continue
            }
            // A trailing `.` or `..` leaves the path ending in `/` (`/a/b/..` is `/a/`).
            if isLast { output.append("") }
        }
        return "/" + output.joined(separator: "/")
    }

    /// The segment with `%2E` read as `.` when it is made of dots alone (`.%2e` is `..`), else
    /// as it is.
    private static func dots(in segment: Substring) -> Substring {
        guard segment.utf8.count <= 6, segment.contains("%") else { return segment }
        let decoded = segment.replacingOccurrences(of: "%2e", with: ".", options: .caseInsensitive)
        return decoded == "." || decoded == ".." ? Substring(decoded) : segment
    }
}
