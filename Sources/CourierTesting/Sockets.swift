import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The socket calls the test servers share: a listener on 127.0.0.1 with a port the system
/// picks, whole writes, and a wait for bytes that notices a hang-up.
package enum Sockets {
    /// Opens a listening socket on 127.0.0.1 with a port the system picks.
    /// - Returns: The descriptor and the port.
    /// - Throws: `POSIXError` when the socket cannot be opened.
    package static func openListener() throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw POSIXError.current() }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 1024) == 0
                    && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            let error = POSIXError.current()
            close(fd)
            throw error
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// After a failed `accept`: when the process is out of descriptors (or memory), waits
    /// 10 ms, since the waiting connection stays queued and the next `accept` would fail at
    /// once, spinning a core until a descriptor frees.
    static func pauseIfOutOfDescriptors() {
        let reason = errno
        guard reason == EMFILE || reason == ENFILE || reason == ENOBUFS || reason == ENOMEM else { return }
        usleep(10_000)
    }

    /// Turns off Nagle's algorithm, so small scripted writes leave at once.
    package static func setNoDelay(_ fd: Int32) {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes all bytes; `false` when the peer hung up.
    package static func write(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// What one wait for bytes found.
    enum Received {
        /// Bytes arrived.
        case bytes(ArraySlice<UInt8>)
        /// Nothing arrived within the wait.
        case nothing
        /// The peer hung up (or the socket was shut down).
        case closed
    }

    /// Waits up to `milliseconds` (0: does not wait) for bytes, into `chunk`.
    static func receive(_ fd: Int32, into chunk: inout [UInt8], waiting milliseconds: Int32) -> Received {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready < 0 { return errno == EINTR ? .nothing : .closed }
        if ready == 0 { return .nothing }
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return .bytes(chunk[..<count]) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return .nothing }
        return .closed
    }

    /// Milliseconds until `deadline`, at least 0 and at most `cap`.
    static func milliseconds(until deadline: ContinuousClock.Instant, cap: Int32 = 50) -> Int32 {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let total = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: min(total, Int64(cap)))
    }
}

extension Sockets {
    /// `SOCK_STREAM` as `socket(_:_:_:)` takes it: an enum case on Linux, a number on Darwin.
    #if canImport(Glibc)
        package static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
        package static let streamType = SOCK_STREAM
    #endif
}

extension POSIXError {
    /// The error for the current `errno`.
    static func current() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}

/// A listening socket on 127.0.0.1 that another thread can stop: ``accept()`` waits on it and
/// on a pipe together. (Linux's `accept` returns when its listener is shut down; Darwin's does
/// not, since its `shutdown` ignores a socket that is not connected.)
///
/// `@unchecked Sendable`: the descriptors never change; ``stop()`` and ``close()`` are called
/// under the owner's lock, and ``close()`` only by the accepting thread after it has seen the
/// stop, so the pipe is never written after it is closed.
final class Listener: @unchecked Sendable {
    let descriptor: Int32
    let port: Int
    private let wakeReader: Int32
    private let wakeWriter: Int32

    /// Opens the listener.
    /// - Throws: `POSIXError` when a socket or the pipe cannot be opened.
    init() throws {
        (descriptor, port) = try Sockets.openListener()
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let error = POSIXError.current()
            systemClose(descriptor)
            throw error
        }
        (wakeReader, wakeWriter) = (ends[0], ends[1])
        // Non-blocking, so a connection that goes away between `poll` and `accept` cannot
        // leave `accept` waiting where a stop does not reach it.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Waits for a connection, or for ``stop()``.
    /// - Returns: The connection's descriptor, or -1 when `accept` failed (`EINTR`,
    ///   `ECONNABORTED`, `EAGAIN`, out of descriptors) or the listener was stopped: the owner's
    ///   own stopped flag tells which.
    func accept() -> Int32 {
        var fds = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
        ]
        while poll(&fds, 2, -1) < 0 {
            guard errno == EINTR else { return -1 }
        }
        guard fds[1].revents == 0 else { return -1 }
        let client = systemAccept(descriptor)
        // Darwin's accepted sockets inherit the listener's flags; the servers block on theirs.
        if client >= 0 { _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK) }
        return client
    }

    /// Refuses new connections and wakes ``accept()``.
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Closes the listener and the pipe: by the accepting thread, once it has seen the stop.
    func close() {
        for fd in [descriptor, wakeReader, wakeWriter] { systemClose(fd) }
    }
}

// The C calls under other names: `Listener`'s own `accept()` and `close()` hide them there.
#if canImport(Glibc)
    private func systemClose(_ fd: Int32) { _ = Glibc.close(fd) }
    private func systemAccept(_ fd: Int32) -> Int32 { Glibc.accept(fd, nil, nil) }
#else
    private func systemClose(_ fd: Int32) { _ = Darwin.close(fd) }
    private func systemAccept(_ fd: Int32) -> Int32 { Darwin.accept(fd, nil, nil) }
#endif
