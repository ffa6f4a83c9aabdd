#if os(Linux)
    import CCurlBaseline
    import Courier
    import Foundation
    import FoundationNetworking

    extension Scenarios {
        /// S18: HTTPS and HTTP/2, against nginx over TLS 1.3 with its certificate from an
        /// authority made at start. Sequential GETs and 256 at once on Courier's default transport
        /// (HTTP/2, its requests sharing connections), against raw URLSession over the same HTTPS and
        /// against Courier itself on the HTTP/1.1-only port (its pool of connections); and how many
        /// connections 256 at once open.
        func s18Secure() async throws -> [Measurement] {
            guard let secure = peer.secure else {
                print("S18 skipped: HTTPS needs nginx and openssl (.ci/run installs both)")
                return []
            }
            let sequential = quick ? 300 : 2000
            let concurrent = quick ? 1024 : 8192
            let tls = TLSOptions(certificateAuthorities: secure.authorityFile)
            let http2 = try secureClient(secure.http2URL, tls: tls)
            let http1 = try secureClient(secure.http1URL, tls: tls)
            let raw = try await trustedRawSession(secure)
            let rawURL = secure.http2URL.appendingPathComponent("api/orders")
            let rawOrders = { @Sendable (session: URLSession) async throws in
                let (data, _) = try await session.data(from: rawURL)
                _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data)
            }
            let runs: [() async throws -> Double] = [
                {
                    try await Harness.rate(count: sequential, concurrency: 1) {
                        _ = try await self.courierOrders(http2)
                    }
                },
                {
                    try await Harness.rate(count: concurrent, concurrency: 256) {
                        _ = try await self.unsharedOrders(http2)
                    }
                },
                {
                    try await Harness.rate(count: concurrent, concurrency: 256) {
                        _ = try await self.unsharedOrders(http1)
                    }
                },
            ]
            let rawRuns: [() async throws -> Double] =
                raw.map { session in
                    [
                        { try await Harness.rate(count: sequential, concurrency: 1) { try await rawOrders(session) } },
                        {
                            try await Harness.rate(count: concurrent, concurrency: 256) { try await rawOrders(session) }
                        },
                    ]
                } ?? []
            let medians = try await Harness.interleaved(
                repetitions: repetitions,
                warmUp: { for run in runs + rawRuns { _ = try await run() } },
                runs: runs + rawRuns)
            let opened = try await connectionsOpened(by: secure.http2URL, tls: tls)
            let opened1 = try await connectionsOpened(by: secure.http1URL, tls: tls)
            var rows: [Measurement] = []
            if raw != nil {
                rows += [
                    .ratio(
                        "S18-https-seq",
                        "\(sequential) sequential GETs over HTTPS (TLS 1.3, HTTP/2), 1 KB envelope, against raw URLSession",
                        unit: "req/s", courier: medians[0], baseline: medians[3], higherIsBetter: true, minimum: 1.5),
                    .ratio(
                        "S18-h2-256",
                        "\(concurrent) GETs over HTTPS, 256 at once, HTTP/2, against raw URLSession", unit: "req/s",
                        courier: medians[1], baseline: medians[4], higherIsBetter: true, minimum: 2),
                ]
            }
            rows += [
                .ratio(
                    "S18-h2-vs-h1",
                    "\(concurrent) GETs over HTTPS, 256 at once: HTTP/2 against Courier's own HTTP/1.1 "
                        + "pool (\(opened1.map(String.init) ?? "?") connections)",
                    unit: "req/s", courier: medians[1], baseline: medians[2], higherIsBetter: true, minimum: 0.9)
            ]
            if let opened {
                rows.append(
                    .budget(
                        "S18-h2-connections", "connections a new client opens for 256 GETs at once over HTTP/2",
                        unit: "connections", value: Double(opened), maximum: 2))
            }
            return rows
        }

        /// A client on a CurlTransport of its own that trusts the benchmark's authority.
        private func secureClient(_ base: URL, tls: TLSOptions) throws -> NetworkClient {
            NetworkClient(
                configuration: .init(
                    baseURL: base.appendingPathComponent("api/"), transport: try CurlTransport(options: .init(tls: tls))
                ))
        }

        /// Raw URLSession, made to trust the benchmark's authority, or `nil` (said why) when it
        /// cannot: Linux URLSession has no trust challenges and reads only the system's bundle
        /// of authorities, so this process is shown the benchmark's authority in its place
        /// (through a mount only this process sees, which needs root).
        private func trustedRawSession(_ secure: SecurePeer) async throws -> URLSession? {
            guard RawSessionTrust.trust(secure.authorityFile) else {
                print(
                    "S18: raw URLSession cannot be made to trust the benchmark's authority (needs root); rows skipped")
                return nil
            }
            let session = Self.rawSession()
            do {
                _ = try await session.data(from: secure.http2URL.appendingPathComponent("api/orders"))
                return session
            } catch {
                print("S18: raw URLSession failed over HTTPS (\(error)); its rows are skipped")
                return nil
            }
        }

        /// How many connections nginx accepted while a new client sent 256 GETs at once.
        private func connectionsOpened(by base: URL, tls: TLSOptions) async throws -> Int? {
            guard let before = peer.acceptedConnections() else { return nil }
            let client = try secureClient(base, tls: tls)
            _ = try await Harness.rate(count: 256, concurrency: 256) { _ = try await self.unsharedOrders(client) }
            guard let after = peer.acceptedConnections() else { return nil }
            // The second count includes the connection it asked on.
            return after - before - 1
        }
    }

    /// Shows Linux URLSession the benchmark's certificate authority: its libcurl reads the
    /// system's bundle of authorities, and URLSession has no setting that replaces it there.
    enum RawSessionTrust {
        /// Whether this process has mounts of its own. Read first thing in `main`, while the
        /// process has one thread (see `courier_baseline_private_mounts`).
        static let ownMounts = courier_baseline_private_mounts() == 0

        /// Puts `authorities` in place of the system's bundle, for this process only.
        static func trust(_ authorities: URL) -> Bool {
            ownMounts && courier_baseline_trust_only(authorities.path) == 0
        }
    }
#endif
