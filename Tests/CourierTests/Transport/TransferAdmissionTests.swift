#if os(Linux)
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// CurlTransport lets a bounded number of transfers to one origin into libcurl; the rest
    /// wait in line, in order, and leave it at once when cancelled or out of time.
    @Suite struct TransferAdmissionTests {
        private let url = TransferAdmission.origin(of: URL(string: "http://127.0.0.1:1/x")!)
        /// A deadline no test reaches.
        private var later: ContinuousClock.Instant { .now + .seconds(600) }

        /// Waits until `condition` holds, or records that it never did.
        private func waitUntil(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(10) * TestTiming.scale
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    Issue.record("waited in vain")
                    return
                }
                try await Task.sleep(for: .milliseconds(1))
            }
        }

        /// Waits until `admission` has `count` requests in line.
        private func waitForLine(_ admission: TransferAdmission, _ count: Int) async throws {
            try await waitUntil { admission.waitingCount == count }
        }

        @Test("past the limit requests wait, and get their places in the order they came")
        func inOrder() async throws {
            let admission = TransferAdmission(limit: 2)
            var held = [
                try await admission.enter(url, until: later, timeout: .seconds(60)),
                try await admission.enter(url, until: later, timeout: .seconds(60)),
            ]
            // What each waiter got, in the order it got it; a place is given back when removed.
            let places = Locked<[(Int, TransferAdmission.Place)]>([])
            var waiters: [Task<Void, any Error>] = []
            for index in 0..<3 {
                waiters.append(
                    Task {
                        let place = try await admission.enter(url, until: later, timeout: .seconds(60))
                        places.withLock { $0.append((index, place)) }
                    })
                try await waitForLine(admission, index + 1)
            }
            // Another origin has places of its own.
            let other = try await admission.enter(
                TransferAdmission.origin(of: URL(string: "http://127.0.0.1:2/x")!), until: later, timeout: .seconds(60))
            withExtendedLifetime(other) {}
            #expect(places.withLock { $0 }.isEmpty)

            held.removeFirst()
            try await waitUntil { places.withLock { $0.count } == 1 }
            held.removeFirst()
            try await waitUntil { places.withLock { $0.count } == 2 }
            #expect(places.withLock { $0.map(\.0) } == [0, 1])
            #expect(admission.waitingCount == 1)
            places.withLock { _ = $0.removeFirst() }
            try await waitUntil { places.withLock { $0.count } == 2 }

            #expect(places.withLock { $0.map(\.0) } == [1, 2])
            #expect(admission.waitingCount == 0)
            for waiter in waiters { try await waiter.value }
        }

        @Test("a cancelled request leaves the line at once, and the next one gets the place")
        func cancelledInLine() async throws {
            let admission = TransferAdmission(limit: 1)
            var held: TransferAdmission.Place? = try await admission.enter(url, until: later, timeout: .seconds(60))
            let cancelled = Task { try await admission.enter(url, until: later, timeout: .seconds(60)) }
            try await waitForLine(admission, 1)
            let next = Task { try await admission.enter(url, until: later, timeout: .seconds(60)) }
            try await waitForLine(admission, 2)

            cancelled.cancel()
            let error = await #expect(throws: NetworkError.self) { try await cancelled.value }
            #expect(error?.code == .cancelled)
            #expect(admission.waitingCount == 1)

            held = nil
            let place = try await next.value
            #expect(admission.waitingCount == 0)
            withExtendedLifetime((held, place)) {}
        }

        @Test("a request still in line at its deadline times out, and holds no place")
        func deadlineInLine() async throws {
            let admission = TransferAdmission(limit: 1)
            var held: TransferAdmission.Place? = try await admission.enter(url, until: later, timeout: .seconds(60))

            let error = await #expect(throws: NetworkError.self) {
                _ = try await admission.enter(url, until: .now + .milliseconds(50), timeout: .milliseconds(50))
            }

            #expect(error?.code == .timedOut)
            #expect(admission.waitingCount == 0)
            // The place is still the holder's alone; once it goes, a new request gets it at once.
            held = nil
            let place = try await admission.enter(url, until: .now + .milliseconds(50), timeout: .milliseconds(50))
            withExtendedLifetime((held, place)) {}
        }

        @Test("one origin is one line, however its URL spells the scheme, the host and the default port")
        func originSpelling() {
            let origin = TransferAdmission.origin(of: URL(string: "http://example.com/a")!)
            #expect(TransferAdmission.origin(of: URL(string: "HTTP://Example.COM:80/b")!) == origin)
            #expect(TransferAdmission.origin(of: URL(string: "https://example.com/a")!) != origin)
            #expect(
                TransferAdmission.origin(of: URL(string: "https://example.com:443/")!)
                    == TransferAdmission.origin(of: URL(string: "https://example.com/")!))
            #expect(TransferAdmission.origin(of: URL(string: "http://example.com:8080/a")!) != origin)
        }

        @Test("a connection limit of 0 is libcurl's no limit: no request waits in line")
        func noLimit() async throws {
            let unlimited = try CurlTransport(options: .init(maximumConnectionsPerHost: 0))
            #expect(unlimited.admissionLimit == Int.max)
            let huge = try CurlTransport(options: .init(maximumConnectionsPerHost: .max))
            #expect(huge.admissionLimit == Int.max)
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/v1/x") { _ in .envelope(data: "ok") }
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: unlimited))
            #expect(try await client.send(Endpoint<String>.get("x")) == "ok")
        }

        @Test("no more transfers to one host are in libcurl at once than the line lets in")
        func boundedInLibcurl() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/v1/slow") { _ in
                try? await Task.sleep(for: .milliseconds(2))
                return .envelope(data: "ok")
            }
            let transport = try CurlTransport(options: .init(maximumConnectionsPerHost: 1, keepsCookies: false))
            let client = NetworkClient(
                configuration: .init(baseURL: server.baseURL.appendingPathComponent("v1/"), transport: transport))
            let limit = transport.admissionLimit
            let count = limit * 4
            // Sampled on a thread of its own: the pool's threads are busy with the requests.
            let highest = Locked(0)
            let sampling = Locked(true)
            let sampled = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                while sampling.withLock({ $0 }) {
                    let now = transport.activeTransferCount
                    highest.withLock { $0 = max($0, now) }
                    usleep(100)
                }
                sampled.signal()
            }

            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        try await client.send(Endpoint<String>.get("slow").sharingIdenticalRequests(false))
                    }
                }
                var answered = 0
                for try await answer in group where answer == "ok" { answered += 1 }
                #expect(answered == count)
            }
            sampling.withLock { $0 = false }
            sampled.wait()

            #expect(highest.withLock { $0 } > 1)
            #expect(highest.withLock { $0 } <= limit)
        }

        @Test("an HTTPS origin lets one transfer in until its connection is ready, then the rest at once")
        func httpsWaitsForItsConnection() async throws {
            let admission = TransferAdmission(limit: 3)
            let secure = TransferAdmission.origin(of: URL(string: "https://127.0.0.1:1/x")!)
            let first = try await admission.enter(secure, until: later, timeout: .seconds(60))
            let admitted = Locked(0)
            var waiters: [Task<TransferAdmission.Place, any Error>] = []
            for count in 1...3 {
                waiters.append(
                    Task {
                        let place = try await admission.enter(secure, until: later, timeout: .seconds(60))
                        admitted.withLock { $0 += 1 }
                        return place
                    })
                try await waitForLine(admission, count)
            }
            // Plain HTTP has nothing to wait for.
            let plain = try await admission.enter(url, until: later, timeout: .seconds(60))
            withExtendedLifetime(plain) {}

            first.connectionReady()
            try await waitUntil { admitted.withLock { $0 } == 2 }

            // The limit holds: the third waits for a place.
            #expect(admission.waitingCount == 1)
            waiters[2].cancel()
            let error = await #expect(throws: NetworkError.self) { try await waiters[2].value }
            #expect(error?.code == .cancelled)
            #expect(admitted.withLock { $0 } == 2)
            withExtendedLifetime(first) {}
        }

        @Test("an HTTPS origin lets at most 100 transfers in at once, so they fit on one HTTP/2 connection")
        func httpsStreamsPerConnection() async throws {
            let admission = TransferAdmission(limit: 256, connections: 16)
            let secure = TransferAdmission.origin(of: URL(string: "https://127.0.0.1:1/x")!)
            // A deadline that ends a wrong wait quickly, as a failure rather than a hang.
            let soon = ContinuousClock.now + .seconds(10) * TestTiming.scale
            let first = try await admission.enter(secure, until: soon, timeout: .seconds(10))
            // 120 queue up while the first connection is not ready yet.
            let admitted = Locked<[TransferAdmission.Place]>([])
            var waiters: [Task<Void, any Error>] = []
            for _ in 0..<120 {
                waiters.append(
                    Task {
                        let place = try await admission.enter(secure, until: soon, timeout: .seconds(10))
                        admitted.withLock { $0.append(place) }
                    })
            }
            try await waitForLine(admission, 120)
            // Ready: the line opens to 100 in all, the first included.
            first.connectionReady()
            try await waitUntil { admitted.withLock { $0.count } == 99 }
            #expect(admission.waitingCount == 21)
            try await Task.sleep(for: .milliseconds(20))
            #expect(admitted.withLock { $0.count } == 99)
            // One ends: the next in line goes.
            _ = admitted.withLock { $0.removeLast() }
            try await waitUntil { admitted.withLock { $0.count } == 99 && admission.waitingCount == 20 }

            // Plain HTTP goes up to the limit.
            var plain: [TransferAdmission.Place] = []
            for _ in 0..<256 { plain.append(try await admission.enter(url, until: soon, timeout: .seconds(10))) }
            for waiter in waiters { waiter.cancel() }
            withExtendedLifetime((first, plain)) {}
        }

        @Test("a connection limit above 100 raises what an HTTPS origin lets in to it")
        func httpsManyConnections() async throws {
            let admission = TransferAdmission(limit: 200 * 16, connections: 200)
            let secure = TransferAdmission.origin(of: URL(string: "https://127.0.0.1:1/x")!)
            let soon = ContinuousClock.now + .seconds(10) * TestTiming.scale
            let first = try await admission.enter(secure, until: soon, timeout: .seconds(10))
            first.connectionReady()
            var held = [first]
            for _ in 1..<200 { held.append(try await admission.enter(secure, until: soon, timeout: .seconds(10))) }
            let next = Task { try await admission.enter(secure, until: soon, timeout: .seconds(10)) }
            try await waitForLine(admission, 1)
            next.cancel()
            withExtendedLifetime(held) {}
        }

        @Test("when the first transfer to an HTTPS origin ends before its connection is ready, the rest go at once")
        func httpsFirstTransferFails() async throws {
            let admission = TransferAdmission(limit: 2)
            let secure = TransferAdmission.origin(of: URL(string: "https://127.0.0.1:1/x")!)
            var first: TransferAdmission.Place? = try await admission.enter(
                secure, until: later, timeout: .seconds(60))
            let places = Locked<[TransferAdmission.Place]>([])
            var waiters: [Task<Void, any Error>] = []
            for count in 1...3 {
                waiters.append(
                    Task {
                        let place = try await admission.enter(secure, until: later, timeout: .seconds(60))
                        places.withLock { $0.append(place) }
                    })
                try await waitForLine(admission, count)
            }

            withExtendedLifetime(first) {}
            first = nil
            try await waitUntil { places.withLock { $0.count } == 2 }

            // Up to the limit: the third waits for a place.
            #expect(admission.waitingCount == 1)
            places.withLock { _ = $0.removeFirst() }
            try await waitUntil { places.withLock { $0.count } == 2 }
            #expect(admission.waitingCount == 0)
            for waiter in waiters { try await waiter.value }
        }
    }
#endif
