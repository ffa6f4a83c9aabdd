import CourierTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A bare TCP connection to 127.0.0.1, for sending hand-written HTTP to `LoopbackServer`.
final class RawSocket {
    private let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Sockets.streamType, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: a class whose init throws after setting every property still runs
        // deinit, which closes the socket; closing twice could close another thread's socket.
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the connection ends and returns the error that ended it (0 for an orderly
    /// close).
    func readError() -> Int32 {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { continue }
            return count == 0 ? 0 : errno
        }
    }

    /// Reads until `text` has arrived (or the peer closes), and returns everything read.
    func read(until text: String) -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(text) {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received.append(contentsOf: chunk[..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// A port on 127.0.0.1 that is bound but not listening, so a connection to it is refused, and
/// no other server can take it while this object lives.
final class RefusingPort {
    let port: Int
    private let fd: Int32

    init() {
        let fd = socket(AF_INET, Sockets.streamType, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
