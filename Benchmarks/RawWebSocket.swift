import CourierTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The WebSocket rows' baseline: what a hand-written client does at the least, with no SDK. A
/// blocking socket on 127.0.0.1, a handshake written by hand (its answer's status checked, the
/// accept key not), and RFC 6455 framing for one message size: each text message masked with a
/// fresh key, each echo read whole. It runs on a thread of its own, since it blocks.
final class RawWebSocket: @unchecked Sendable {
    // `@unchecked Sendable`: used by one thread at a time (the caller hands it over and waits).
    private let fd: Int32
    private var received = [UInt8](repeating: 0, count: 1 << 16)
    private var frame: [UInt8] = []

    /// Connects and makes the handshake.
    init(port: Int) throws {
        fd = socket(AF_INET, Sockets.streamType, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        Sockets.setNoDelay(fd)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let head =
            "GET /echo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        guard connected, Sockets.write(fd, Array(head.utf8)) else { throw Failure("could not connect") }
        var answer: [UInt8] = []
        while answer.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let count = received.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure("no answer to the handshake") }
            answer += received[..<count]
        }
        guard answer.starts(with: Array("HTTP/1.1 101".utf8)) else { throw Failure("the handshake was refused") }
    }

    deinit { close(fd) }

    /// Sends `count` copies of `text` in bursts of `burst` (a burst written, then its echoes
    /// read); returns the seconds it took. Throws when an echo is not the message.
    func echo(_ text: [UInt8], count: Int, burst: Int) throws -> Double {
        precondition(text.count >= 126 && text.count < 65_536, "one length encoding: 16 bits")
        let echoSize = 4 + text.count
        // The header never changes; the key and the masked text are written over each time.
        frame = [0x81, 0xFE, UInt8(text.count >> 8), UInt8(text.count & 0xFF), 0, 0, 0, 0]
        frame += text
        let start = ContinuousClock.now
        var generator = SystemRandomNumberGenerator()
        var sent = 0
        while sent < count {
            let now = min(burst, count - sent)
            for _ in 0..<now {
                var key = UInt32.random(in: .min ... .max, using: &generator)
                frame.withUnsafeMutableBytes { bytes in
                    withUnsafeBytes(of: &key) { keyBytes in
                        for index in 0..<4 { bytes[4 + index] = keyBytes[index] }
                        text.withUnsafeBytes { plain in
                            for index in 0..<plain.count { bytes[8 + index] = plain[index] ^ keyBytes[index & 3] }
                        }
                    }
                }
                guard Sockets.write(fd, frame) else { throw Failure("the peer hung up") }
            }
            try receive(echoSize * now, expecting: text)
            sent += now
        }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Reads `total` bytes of echoes of `text` (each a 4-byte header and the text).
    private func receive(_ total: Int, expecting text: [UInt8]) throws {
        var pending: [UInt8] = []
        pending.reserveCapacity(total)
        while pending.count < total {
            let count = received.withUnsafeMutableBytes {
                recv(fd, $0.baseAddress, min($0.count, total - pending.count), 0)
            }
            guard count > 0 else { throw Failure("the peer hung up") }
            pending += received[..<count]
        }
        let size = 4 + text.count
        for offset in stride(from: 0, to: total, by: size) {
            guard pending[offset] == 0x81, pending[(offset + 4)..<(offset + size)].elementsEqual(text) else {
                throw Failure("an echo was not the message")
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
