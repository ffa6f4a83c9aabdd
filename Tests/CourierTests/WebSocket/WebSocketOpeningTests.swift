#if os(Linux)
    import CourierTesting
    import Foundation
    import Glibc
    import Testing

    @testable import Courier

    /// The Linux opening of a WebSocket (libcurl connects, Courier writes the handshake), with a
    /// connection that never completes.
    @Suite struct WebSocketOpeningTests {
        /// A listener on 127.0.0.1 that accepts nothing, its queue filled: the system drops the
        /// next connection's first packet, so connecting to it hangs.
        private final class Unanswering {
            let port: Int
            private var descriptors: [Int32] = []
            private static let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)

            init() throws {
                let listener = socket(AF_INET, Self.type, 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let listening = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                            && getsockname(listener, $0, &length) == 0
                    }
                }
                guard listening else { throw POSIXError(.EADDRNOTAVAIL) }
                port = Int(UInt16(bigEndian: address.sin_port))
                descriptors.append(listener)
                // What the queue holds, connected and never accepted.
                for _ in 0..<3 { descriptors.append(Self.connecting(to: &address)) }
                usleep(50_000)
            }

            /// Whether a connection begun now is still not made after 200 ms: the listener
            /// hangs connections, as the test needs.
            func hangs() -> Bool {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let probe = Self.connecting(to: &address)
                defer { close(probe) }
                var ready = pollfd(fd: probe, events: Int16(POLLOUT), revents: 0)
                return poll(&ready, 1, 200) == 0
            }

            /// A connection begun without waiting for it.
            private static func connecting(to address: inout sockaddr_in) -> Int32 {
                let descriptor = socket(AF_INET, type | Int32(SOCK_NONBLOCK.rawValue), 0)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                return descriptor
            }

            deinit { for descriptor in descriptors { close(descriptor) } }
        }

        @Test("a cancelled opening stops connecting at once, not when the connection's time is up")
        func cancelledWhileConnecting() async throws {
            let server = try Unanswering()
            defer { withExtendedLifetime(server) {} }
            try #require(server.hangs(), "connecting to a listener whose queue is full was expected to hang")
            let request = HTTPRequest(
                method: .get, url: URL(string: "http://127.0.0.1:\(server.port)/ws")!, timeout: .seconds(30))
            let ended = Flag()
            let opening = Task {
                try await CurlWebSocketOpening.open(request, tls: TLSOptions(), maximumBodySize: 1024) { ended.set() }
            }
            try await Task.sleep(for: .milliseconds(300))
            let cancelledAt = ContinuousClock.now
            opening.cancel()
            let error = await #expect(throws: NetworkError.self) { try await opening.value }
            #expect(error?.code == .cancelled)
            // libcurl asks the progress function at least once a second while it connects.
            while !ended.isSet, ContinuousClock.now - cancelledAt < .seconds(5) * TestTiming.scale {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(ended.isSet)
            #expect(ContinuousClock.now - cancelledAt < .seconds(5) * TestTiming.scale)
        }
    }
#endif
