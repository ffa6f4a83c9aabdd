import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How URLSessionTransport names URLSession's errors: the same codes CurlTransport gives for
/// the same failures, whichever platform's URLSession reports them.
@Suite struct URLErrorMappingTests {
    @Test(
        "TLS, offline and App Transport Security failures get their own codes",
        arguments: [
            (URLError.Code.serverCertificateUntrusted, NetworkError.Code.tls),
            (.serverCertificateHasBadDate, .tls), (.serverCertificateHasUnknownRoot, .tls),
            (.serverCertificateNotYetValid, .tls), (.secureConnectionFailed, .tls),
            (.clientCertificateRejected, .tls), (.clientCertificateRequired, .tls),
            (.notConnectedToInternet, .offline), (.dataNotAllowed, .offline), (.internationalRoamingOff, .offline),
            (.appTransportSecurityRequiresSecureConnection, .invalidRequest), (.timedOut, .timedOut),
            (.cancelled, .cancelled), (.networkConnectionLost, .transport),
        ])
    func mapping(error: URLError.Code, expected: NetworkError.Code) {
        let mapped = URLSessionTransport.Call.networkError(for: URLError(error))
        #expect(mapped.code == expected, "\(error.rawValue) → \(mapped)")
        #expect(mapped.underlying is URLError)
    }
}
