import Foundation

/// The peer's own capacity, measured with a minimal keep-alive HTTP client on raw sockets (no
/// URLSession, no parsing beyond `Content-Length`), so a reader can see that the server is not
/// what limits the client scenarios.
enum Capacity {
    /// Requests per second for `GET path` over `connections` keep-alive connections, each on its
    /// own thread, for about `seconds`.
    static func measure(port: Int, path: String, connections: Int, seconds: Double) -> Double {
        let group = DispatchGroup()
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: connections)
        defer { counts.deallocate() }
        let deadline = Date().addingTimeInterval(seconds)
        for index in 0..<connections {
            counts[index] = 0
            let slot = counts.baseAddress! + index
            let pointer = UInt(bitPattern: slot)
            group.enter()
            Thread.detachNewThread {
                UnsafeMutablePointer<Int>(bitPattern: pointer)!.pointee = run(port: port, path: path, until: deadline)
                group.leave()
            }
        }
        group.wait()
        return Double(counts.reduce(0, +)) / seconds
    }

    private static func run(port: Int, path: String, until deadline: Date) -> Int {
        let fd = connectToLoopback(port: port)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var done = 0
        while Date() < deadline {
            guard send(fd, request, request.count, 0) == request.count else { return done }
            var received: [UInt8] = []
            var needed: Int?
            while needed.map({ received.count < $0 }) ?? true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { return done }
                received.append(contentsOf: buffer[0..<count])
                if needed == nil { needed = expectedLength(received) }
            }
            done += 1
        }
        return done
    }

    /// Head length plus `Content-Length`, once the head is complete.
    private static func expectedLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4,
            let end = (0...(bytes.count - 4)).first(where: {
                bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
            })
        else { return nil }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        let length =
            head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return end + 4 + length
    }
}
