import Foundation

extension URL {
    /// The URL's origin (RFC 6454): its scheme, host and port, lower-cased, with the scheme's
    /// default port when it names none. What is kept apart for each server: credentials on a
    /// redirect, a clock correction.
    var origin: String {
        let scheme = scheme?.lowercased() ?? ""
        let port = port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host?.lowercased() ?? ""):\(port)"
    }
}
