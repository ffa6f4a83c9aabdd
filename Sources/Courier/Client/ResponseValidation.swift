import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Checks an answer's status and media type before it is decoded.
struct ResponseValidation: Sendable {
    let acceptableStatusCodes: Set<Int>
    let acceptableContentTypes: Set<String>
    /// The client's decoder, which reads an error body's envelope as the client reads any.
    let decoder: JSONDecoder

    /// Throws ``NetworkError/Code/httpStatus`` for a status outside the acceptable set and
    /// ``NetworkError/Code/unacceptableContentType`` for a JSON answer of another media type.
    /// `HEAD`, `204` and empty bodies need no media type.
    func validate(_ response: HTTPResponse, method: HTTPMethod, checksContentType: Bool) throws(NetworkError) {
        guard acceptableStatusCodes.contains(response.status) else { throw statusError(response) }
        guard checksContentType, method != .head, response.status != 204, !response.body.isEmpty else { return }
        guard let mediaType = response.mediaType, !mediaType.isEmpty else {
            throw NetworkError(.unacceptableContentType, "The answer has no Content-Type.").answered(by: response)
        }
        let family = mediaType.split(separator: "/").first.map { "\($0)/*" } ?? ""
        guard
            acceptableContentTypes.contains(mediaType) || acceptableContentTypes.contains(family)
                || acceptableContentTypes.contains("*/*")
        else {
            throw NetworkError(
                .unacceptableContentType,
                "The answer's Content-Type \(mediaType) is not one of \(acceptableContentTypes.sorted())."
            ).answered(by: response)
        }
    }

    /// Whether `response` passes ``validate(_:method:checksContentType:)`` as a JSON answer to a
    /// `GET`: one whose envelope is worth decoding.
    func accepts(_ response: HTTPResponse) -> Bool {
        // The status first: a refused one would build its error, reading the body.
        guard acceptableStatusCodes.contains(response.status) else { return false }
        do throws(NetworkError) {
            try validate(response, method: .get, checksContentType: true)
            return true
        } catch {
            return false
        }
    }

    /// An ``NetworkError/Code/httpStatus`` error that keeps status, headers and body, with the
    /// fields of an error body filled in when it parses: an older backend's `errorCode`,
    /// `errorDescription` and `content`, or an envelope's code and message.
    func statusError(_ response: HTTPResponse) -> NetworkError {
        let reason = HTTPURLResponse.localizedString(forStatusCode: response.status)
        var error = NetworkError(.httpStatus, "The server answered \(response.status) (\(reason)).")
            .answered(by: response)
        let view = response.envelope(decoder)
        // An envelope of the client's format first: its `data` may well be called `content`.
        if let code = view.code {
            error.businessCode = code
            error.businessMessage = view.message
        } else if let fields = view.errorFields {
            error.businessCode = fields.errorCode
            error.businessMessage = fields.errorDescription
            error.userMessage = fields.content
        }
        return error
    }
}
