/// Adds common headers to every request: static values and values computed per request (an
/// encrypted `User-Agent`, a device header). A header the endpoint sets itself wins.
///
/// ```swift
/// .headers(["phone_type": "app_iOS"]) { _ in ["User-Agent": try await agent.encrypted()] }
/// ```
public struct HeadersInterceptor: Interceptor {
    /// Computes headers for one request.
    public typealias Provider = @Sendable (HTTPRequest) async throws -> HTTPHeaders

    private let fixed: HTTPHeaders
    private let computed: Provider?

    /// Creates the layer.
    /// - Parameters:
    ///   - fixed: Headers added to every request.
    ///   - computed: Headers computed for each request; they win over `fixed`.
    public init(_ fixed: HTTPHeaders = [:], computed: Provider? = nil) {
        self.fixed = fixed
        self.computed = computed
    }

    /// ``InterceptorLayer/headers``.
    public var layer: InterceptorLayer { .headers }

    /// Adds the headers the request does not already have, then calls `next`.
    /// - Parameters:
    ///   - request: The request.
    ///   - context: Not used.
    ///   - next: The inner layers.
    /// - Returns: The response of the inner layers.
    /// - Throws: ``NetworkError/Code/invalidRequest`` when a computed header cannot be produced;
    ///   whatever `next` throws (the transport refuses a header that is not valid).
    public func intercept(_ request: HTTPRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> HTTPResponse
    {
        var added = fixed
        if let computed {
            do {
                added.merge(try await computed(request))
            } catch {
                throw NetworkError(.invalidRequest, "Computing the common headers failed.", underlying: error)
            }
        }
        var request = request
        // The transport refuses a field that is not valid (``HTTPRequest/checkWireSafety()``).
        for field in added where request.headers[field.name] == nil {
            request.headers.append(name: field.name, value: field.value)
        }
        return try await next(request)
    }
}

extension Interceptor where Self == HeadersInterceptor {
    /// A ``HeadersInterceptor``.
    /// - Parameters:
    ///   - fixed: Headers added to every request.
    ///   - computed: Headers computed for each request.
    /// - Returns: The layer.
    public static func headers(_ fixed: HTTPHeaders = [:], computed: HeadersInterceptor.Provider? = nil) -> Self {
        HeadersInterceptor(fixed, computed: computed)
    }
}
