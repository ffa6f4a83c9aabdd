import Foundation

/// Adds the parameters every call of an app backend carries (`version`, `deviceId`, `os`, …).
///
/// By default they go where the request's own parameters are: the query for `GET`, `HEAD` and
/// `DELETE` and for requests with a raw body; the form for form bodies and for requests without
/// a body (which then get a form body); the top-level object of a JSON body. A backend that
/// wants them in the query of every call, or as headers, says so with a ``Placement``. A
/// parameter the request already has keeps its value.
///
/// ```swift
/// .commonParameters(["version": "3.2.0", "os": "2"]) { _ in ["deviceId": await device.id] },
/// .commonParameters(["version": "3.2.0", "os": "2"], placement: .query),   // ?version=&os= on every call
/// ```
public struct CommonParametersInterceptor: Interceptor {
    /// Computes parameters for one request.
    public typealias Provider = @Sendable (HTTPRequest) async throws -> Parameters

    /// Where the parameters go.
    public enum Placement: Sendable, Hashable {
        /// Where the request's own parameters are: the query, a form, or a JSON object.
        case withTheRequest
        /// In the query of every request, whatever its method and body; one the request
        /// already has in its query, form or multipart form's text fields is not added again
        /// (a member of a JSON body does not count: it is the body's own).
        case query
        /// As header fields, one for each parameter, named as it is: the names must be valid
        /// header field names (no space, colon or other separator) and the values hold no line
        /// break, or the request fails with
        /// ``NetworkError/Code/invalidRequest``. ``SigningInterceptor`` does not sign headers.
        case headers
    }

    private let fixed: Parameters
    private let placement: Placement
    private let computed: Provider?

    /// Creates the layer.
    /// - Parameters:
    ///   - fixed: Parameters added to every request.
    ///   - placement: Where they go; with the request's own parameters by default.
    ///   - computed: Parameters computed for each request, added after `fixed`.
    public init(_ fixed: Parameters = [:], placement: Placement = .withTheRequest, computed: Provider? = nil) {
        self.fixed = fixed
        self.placement = placement
        self.computed = computed
    }

    /// ``InterceptorLayer/commonParameters``.
    public var layer: InterceptorLayer { .commonParameters }

    /// Adds the parameters the request does not already have, then calls `next`.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Not used.
    ///   - next: The inner layers.
    /// - Returns: The response of the inner layers.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when computed parameters cannot be
    ///   produced; whatever `next` throws.
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        var added = fixed
        if let computed {
            do {
                added.append(contentsOf: try await computed(request))
            } catch {
                throw NetworkError(.invalidRequest, "Computing the common parameters failed.", underlying: error)
            }
        }
        var request = request
        switch placement {
        case .withTheRequest:
            try request.addParametersIncludingJSON(added, merge: .keepExisting)
        case .query:
            request.addQueryParametersKeepingExisting(added)
        case .headers:
            for item in added.items where request.headers[item.name] == nil { request.headers[item.name] = item.value }
        }
        return try await next(request)
    }
}

extension Interceptor where Self == CommonParametersInterceptor {
    /// A ``CommonParametersInterceptor``.
    /// - Parameters:
    ///   - fixed: Parameters added to every request.
    ///   - placement: Where they go; with the request's own parameters by default.
    ///   - computed: Parameters computed for each request.
    /// - Returns: The layer.
    public static func commonParameters(
        _ fixed: Parameters = [:], placement: CommonParametersInterceptor.Placement = .withTheRequest,
        computed: CommonParametersInterceptor.Provider? = nil
    ) -> Self {
        CommonParametersInterceptor(fixed, placement: placement, computed: computed)
    }
}
