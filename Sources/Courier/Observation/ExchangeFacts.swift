import Foundation

/// What a transport measured about one exchange beyond ``TransferTimings``: the moments it
/// knows, each since the exchange began, the connection, and the bytes. `nil` where it does not
/// measure a fact.
package struct ExchangeFacts: Sendable, Hashable {
    /// Until the request's last byte was sent.
    var requestSent: Duration?
    /// Until the answer's head arrived (where the first byte's moment is not known).
    var headReceived: Duration?
    /// Until the answer's body was complete.
    var bodyReceived: Duration?
    /// Whether an earlier exchange's connection was used again.
    var isReused: Bool?
    /// The server's address and port as connected to.
    var remoteAddress: String?
    var requestHeaderBytes: Int?
    var requestBodyBytes: Int?
    var responseHeaderBytes: Int?
    var responseBodyBytes: Int?

    package init() {}

    /// `host:port`, with brackets around an IPv6 address.
    static func address(_ host: String, port: Int?) -> String {
        let host = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port.map { "\(host):\($0)" } ?? host
    }
}
