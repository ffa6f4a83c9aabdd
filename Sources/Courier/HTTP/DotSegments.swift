/// Removes `.` and `..` segments from a URL path (RFC 3986, section 5.2.4).
///
/// libcurl does this to every path before sending it, on both transports (URLSession on Linux
/// is libcurl underneath), and cannot be told not to through URLSession. Courier does it first,
/// in ``HTTPRequest/wireURL()``, so the path a signature covers is the path that is sent.
///
/// Only literal `.` and `..` segments count: `%2E%2E` is left alone, as libcurl leaves it.
enum DotSegments {
    /// `path` without dot-segments. A path that does not start with `/` (or holds no `/.`) is
    /// returned as it is.
    /// - Parameter path: A percent-encoded absolute path, for example `/a/b/../c`.
    /// - Returns: The path without dot-segments, for example `/a/c`.
    static func removed(from path: String) -> String {
        guard path.hasPrefix("/"), path.contains("/.") else { return path }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
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
}
