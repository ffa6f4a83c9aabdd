import Foundation

/// Adds the parameters every call of an app backend carries (`version`, `deviceId`, `os`, …).
///
/// They go where the request's own parameters are: the query for `GET`, `HEAD` and `DELETE`
/// and for requests with a raw body; the form for form bodies and for requests without a body
/// (which then get a form body); the top-level object of a JSON body. A parameter the request
/// already has keeps its value.
///
/// ```swift
/// .commonParameters(["version": "3.2.0", "os": "2"]) { _ in ["deviceId": await device.id] }
/// ```
public struct CommonParametersInterceptor: Interceptor {
    /// Computes parameters for one request.
    public typealias Provider = @Sendable (HTTPRequest) async throws -> Parameters

    private let fixed: Parameters
    private let computed: Provider?

    /// Creates the layer.
    /// - Parameters:
    ///   - fixed: Parameters added to every request.
    ///   - computed: Parameters computed for each request, added after `fixed`.
    public init(_ fixed: Parameters = [:], computed: Provider? = nil) {
        self.fixed = fixed
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
        try request.addParametersIncludingJSON(added, merge: .keepExisting)
        return try await next(request)
    }
}

extension Interceptor where Self == CommonParametersInterceptor {
    /// A ``CommonParametersInterceptor``.
    /// - Parameters:
    ///   - fixed: Parameters added to every request.
    ///   - computed: Parameters computed for each request.
    /// - Returns: The layer.
    public static func commonParameters(
        _ fixed: Parameters = [:], computed: CommonParametersInterceptor.Provider? = nil
    ) -> Self {
        CommonParametersInterceptor(fixed, computed: computed)
    }
}
