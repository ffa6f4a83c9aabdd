import Foundation

extension NetworkClient {
    /// Everything a ``NetworkClient`` is set up with. Immutable once the client is created.
    ///
    /// ```swift
    /// var configuration = NetworkClient.Configuration(baseURL: URL(string: "https://api.example.com/v1/")!)
    /// configuration.timeout = .seconds(10)
    /// configuration.envelope = EnvelopeFormat(codeKey: "result", successCodes: [1])
    /// let client = NetworkClient(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The URL endpoint paths are joined to.
        public var baseURL: URL
        /// Who is signed in: the token every request carries, its refresh, the silent login and
        /// the logout (see ``Session``); `nil` (the default) sends every request without one.
        /// The session's layer runs outside every layer of ``interceptors``.
        public var session: Session?
        /// The overall deadline of a request when its endpoint sets none. Default 30 s.
        public var timeout: Duration
        /// The envelope format of the backend. Default ``EnvelopeFormat/standard``.
        public var envelope: EnvelopeFormat
        /// The statuses that count as success. Default `200..<300`.
        public var acceptableStatusCodes: Set<Int>
        /// The media types accepted for JSON answers (``ResponseDecoding/envelope`` and
        /// ``ResponseDecoding/json``), lower-case; `*/*` accepts any. Default: what app backends send,
        /// `application/json`, `text/json`, `text/javascript`, `text/html`, `text/plain`.
        public var acceptableContentTypes: Set<String>
        /// Decodes JSON answers. The client uses a copy, so changing this object later has no effect.
        public var decoder: JSONDecoder
        /// Encodes JSON bodies. The client uses a copy, so changing this object later has no effect.
        public var encoder: JSONEncoder
        /// Sends requests. `nil` (the default) means a new ``defaultTransport()`` owned by the
        /// client.
        public var transport: (any Transport)?
        /// Tells whether the device is online; `nil` (the default) sends every request regardless.
        public var reachability: (any ReachabilityMonitor)?
        /// What happens to a request while ``reachability`` says offline. Default ``ReachabilityPolicy/failFast``.
        public var reachabilityPolicy: ReachabilityPolicy
        /// The cache for endpoints whose ``Endpoint/cachePolicy`` uses one; `nil` (the default)
        /// sends every endpoint to the network. Its answers belong to the ``session``'s user.
        public var cache: ResponseCache?
        /// The interceptor layers, outermost first: each request passes through them in this order
        /// on its way to the transport, and its response in reverse order. They run inside the
        /// ``session``'s layer, so they see the token it attached.
        public var interceptors: [any Interceptor]
        /// The most bytes an answer's body kept in memory may have, counted after decoding, so
        /// a server (or a compression bomb) cannot exhaust memory: a larger body fails with
        /// ``NetworkError/Code/responseTooLarge``. Default 64 MiB; `nil` for no limit. An
        /// endpoint may set its own (``Endpoint/maximumResponseBodySize``). Downloads to a file
        /// are not limited unless their endpoint sets a limit.
        public var maximumResponseBodySize: Int64?
        /// What hides secrets in the errors the client throws, the ``LoggingInterceptor``'s
        /// lines and their `curl` commands. Default ``Redactor/standard``; add your backend's
        /// secret names with ``Redactor/adding(_:)``.
        public var redactor: Redactor
        /// How many of the latest exchanges the client keeps, their secrets hidden, for
        /// ``NetworkClient/recentTraffic()`` (a bug report's HTTP archive). Default 0: none is
        /// kept, and nothing is spent on keeping them.
        public var keptExchanges: Int
        /// What watches every request: each gets a ``RequestTimeline`` when it ends (see
        /// ``RequestObserver``). Default none: then nothing is measured or recorded.
        public var observers: [any RequestObserver]

        /// Creates a configuration.
        /// - Parameters:
        ///   - baseURL: The URL endpoint paths are joined to.
        ///   - timeout: The default overall deadline of a request.
        ///   - envelope: The backend's envelope format.
        ///   - session: Who is signed in, or `nil`.
        ///   - cache: The cache, or `nil`.
        ///   - reachability: Tells whether the device is online, or `nil`.
        ///   - interceptors: The interceptor layers, outermost first.
        ///   - transport: The transport, or `nil` for ``defaultTransport()``.
        public init(
            baseURL: URL, timeout: Duration = .seconds(30), envelope: EnvelopeFormat = .standard,
            session: Session? = nil, cache: ResponseCache? = nil, reachability: (any ReachabilityMonitor)? = nil,
            interceptors: [any Interceptor] = [], transport: (any Transport)? = nil
        ) {
            self.baseURL = baseURL
            self.timeout = timeout
            self.envelope = envelope
            self.session = session
            self.cache = cache
            self.acceptableStatusCodes = Set(200..<300)
            self.acceptableContentTypes = [
                "application/json", "text/json", "text/javascript", "text/html", "text/plain",
            ]
            self.decoder = JSONDecoder()
            self.encoder = JSONEncoder()
            self.transport = transport
            self.interceptors = interceptors
            self.reachability = reachability
            self.reachabilityPolicy = .failFast
            self.maximumResponseBodySize = 64 << 20
            self.redactor = .standard
            self.keptExchanges = 0
            self.observers = []
        }

        /// The transport a client uses when its configuration sets none: on Linux a
        /// `CurlTransport` (faster than `URLSession` there and free of its faults; it passes the
        /// whole suite), falling back to ``URLSessionTransport`` if libcurl cannot be loaded;
        /// elsewhere a ``URLSessionTransport``.
        /// - Returns: A new transport.
        public static func defaultTransport() -> any Transport {
            #if os(Linux)
                if let curl = try? CurlTransport() { return curl }
            #endif
            return URLSessionTransport()
        }
    }
}

extension JSONDecoder {
    /// A new decoder with the same settings, plus `userInfo` entries.
    func copy(addingUserInfo extra: [CodingUserInfoKey: any Sendable]) -> JSONDecoder {
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.allowsJSON5 = allowsJSON5
        copy.assumesTopLevelDictionary = assumesTopLevelDictionary
        copy.userInfo = userInfo.merging(extra) { _, new in new }
        return copy
    }
}

extension JSONEncoder {
    /// A new encoder with the same settings.
    func copy() -> JSONEncoder {
        let copy = JSONEncoder()
        copy.outputFormatting = outputFormatting
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.userInfo = userInfo
        return copy
    }

}
