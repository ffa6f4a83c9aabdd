import Foundation

/// Adds the parameters every call of an app backend carries (`version`, `deviceId`, `os`, …).
///
/// They go where the request's own parameters are: the query for `GET`, `HEAD` and `DELETE`
/// and for requests with a raw body; the form for form bodies and for requests without a body
/// (which then get a form body); the top-level object of a JSON body. A parameter the request
/// already has keeps its value.
///
/// ```swift
/// .commonParameters(["version": "3.2.0", "os": "2"]) { ["deviceId": await device.id] }
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
        return try await next(try Self.adding(added, to: request))
    }

    /// The request with `parameters` added where its own parameters are.
    static func adding(_ parameters: Parameters, to request: HTTPRequest) throws(NetworkError) -> HTTPRequest {
        guard !parameters.isEmpty else { return request }
        var request = request
        func missing(from existing: Parameters) -> [Parameters.Item] {
            parameters.items.filter { item in existing[item.name] == nil }
        }
        let inQuery = request.method.carriesParametersInQuery
        switch request.body {
        case .none where !inQuery:
            request.body = .form(Parameters(missing(from: request.query)))
        case .form(var form) where !inQuery:
            form.items.append(contentsOf: missing(from: form))
            request.body = .form(form)
        case .json(let data) where !inQuery:
            request.body = .json(try merging(parameters, into: data))
        default:
            request.query.items.append(contentsOf: missing(from: request.query))
        }
        return request
    }

    /// Adds parameters as string members of a top-level JSON object, keeping existing members.
    private static func merging(_ parameters: Parameters, into json: Data) throws(NetworkError) -> Data {
        guard var object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw NetworkError(
                .invalidRequest, "Common parameters can only be added to a JSON body that is an object.")
        }
        for item in parameters.items where object[item.name] == nil { object[item.name] = item.value }
        do {
            return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        } catch {
            throw NetworkError(.invalidRequest, "The JSON body could not be re-encoded.", underlying: error)
        }
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
