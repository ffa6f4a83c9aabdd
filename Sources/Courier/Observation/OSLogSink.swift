#if canImport(os)
    import os

    /// A ``LogSink`` for the unified log on Apple platforms (Console, `log stream`).
    ///
    /// Each entry's summary (direction, method, status, duration) is public; its details (the
    /// URL and its query, headers, bodies) are private unless `detailsArePublic`, so they show as
    /// `<private>` outside a debugging session. Each entry's ``LogEntry/level`` picks the log
    /// level: error, default (for a warning), info or debug.
    ///
    /// ```swift
    /// configuration.interceptors.append(.logging(sink: OSLogSink(subsystem: "com.example.app")))
    /// ```
    ///
    /// (Not compiled on Linux, where Courier is built and tested; the entries it writes are
    /// ``LoggingInterceptor``'s, whose split into summary and details the Linux tests check.)
    public struct OSLogSink: LogSink {
        private let subsystem: String
        private let category: String
        private let detailsArePublic: Bool

        /// Creates the sink.
        /// - Parameters:
        ///   - subsystem: The log's subsystem, usually the app's bundle identifier.
        ///   - category: The log's category.
        ///   - detailsArePublic: Whether URLs, headers and bodies show outside a debugging
        ///     session. Secrets are redacted either way.
        public init(subsystem: String = "Courier", category: String = "network", detailsArePublic: Bool = false) {
            self.subsystem = subsystem
            self.category = category
            self.detailsArePublic = detailsArePublic
        }

        /// Writes the entry to the unified log.
        /// - Parameter entry: The entry.
        public func write(_ entry: LogEntry) {
            // The system keeps one log object per subsystem and category, so this is cheap.
            let logger = Logger(subsystem: subsystem, category: category)
            let level: OSLogType =
                switch entry.level {
                case .error: .error
                case .warning: .default
                case .info: .info
                case .debug: .debug
                }
            if detailsArePublic {
                logger.log(level: level, "\(entry.summary, privacy: .public) \(entry.details, privacy: .public)")
            } else {
                logger.log(level: level, "\(entry.summary, privacy: .public) \(entry.details, privacy: .private)")
            }
        }
    }
#endif
