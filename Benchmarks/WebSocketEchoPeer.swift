import Courier
import CourierTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The WebSocket rows' server: an echo on 127.0.0.1, in a process of its own (this program run
/// with ``flag``), so its threads and buffers are not counted in the client's memory. Each
/// connection has a thread that reads a frame and writes it back unmasked (a ping as a pong, a
/// close as a close, after which it hangs up), with nothing queued between the two, so the
/// server adds the same small cost to Courier and to the raw client it is compared with.
enum WebSocketEchoPeer {
    static let flag = "--websocket-echo-peer"

    /// The child's side: prints the port, then serves until its standard input closes (the
    /// parent ended, however it ended).
    static func serve() -> Never {
        guard let (listener, port) = try? Sockets.openListener() else {
            print("no listener")
            exit(1)
        }
        FileHandle.standardOutput.write(Data("\(port)\n".utf8))
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {}
            _exit(0)
        }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                usleep(1_000)
                continue
            }
            Sockets.setNoDelay(connection)
            let thread = Thread { echo(connection) }
            thread.stackSize = 256 << 10
            thread.start()
        }
    }

    /// Answers the handshake, then echoes frames until a close or a hang-up.
    private static func echo(_ fd: Int32) {
        defer { close(fd) }
        var input = ByteQueue()
        var headEnd: Int?
        while headEnd == nil {
            guard input.receive(from: fd) else { return }
            headEnd = input.bytes[input.start...].firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        }
        let head = String(decoding: input.bytes[input.start..<headEnd!], as: UTF8.self)
        input.start = headEnd!
        let keyLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
        guard let key = keyLine?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
        else { return }
        let answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(WebSocketHandshake.accept(for: key))\r\n\r\n"
        guard Sockets.write(fd, Array(answer.utf8)) else { return }
        var output: [UInt8] = []
        while true {
            guard let frame = input.maskedFrame() else {
                guard input.receive(from: fd) else { return }
                continue
            }
            let opcode = input.bytes[frame.start] & 0x0F
            if opcode == 0x0A { continue }  // a pong
            output.removeAll(keepingCapacity: true)
            output.append(opcode == 0x09 ? 0x8A : input.bytes[frame.start])
            let length = frame.payload.count
            if length < 126 {
                output.append(UInt8(length))
            } else if length < 65_536 {
                output += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
            } else {
                output.append(127)
                output += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(length) >> ($0 * 8)) }
            }
            output += input.bytes[frame.payload]
            guard Sockets.write(fd, output), opcode != 0x08 else { return }
        }
    }

    /// Bytes read and not yet used, unmasked in place as frames are taken.
    private struct ByteQueue {
        var bytes: [UInt8] = []
        var start = 0
        private var chunk = [UInt8](repeating: 0, count: 1 << 16)

        /// Reads what has arrived (waiting for it); `false` on a hang-up.
        mutating func receive(from fd: Int32) -> Bool {
            if start > 0, start == bytes.count || start > 1 << 20 {
                bytes.removeFirst(start)
                start = 0
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return count < 0 && errno == EINTR }
            bytes += chunk[..<count]
            return true
        }

        /// The next whole client frame, its payload unmasked: where it starts and its
        /// payload's range; `nil` until it has all arrived. Past it afterwards.
        mutating func maskedFrame() -> (start: Int, payload: Range<Int>)? {
            let available = bytes.count - start
            guard available >= 2 else { return nil }
            var length = Int(bytes[start + 1] & 0x7F)
            var headerSize = 2
            if length == 126 {
                guard available >= 4 else { return nil }
                length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
                headerSize = 4
            } else if length == 127 {
                guard available >= 10 else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[start + $1]) }
                headerSize = 10
            }
            guard available >= headerSize + 4 + length else { return nil }
            let key = start + headerSize
            let payload = (key + 4)..<(key + 4 + length)
            for index in payload { bytes[index] ^= bytes[key + (index - payload.lowerBound) % 4] }
            let frameStart = start
            start = payload.upperBound
            return (frameStart, payload)
        }
    }
}

/// The echo peer as the parent sees it: the child process and its port.
final class WebSocketEchoProcess: Sendable {
    let port: Int
    private let process: Process
    private let input: Pipe

    init() throws {
        process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [WebSocketEchoPeer.flag]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw Scenarios.BenchmarkError.baselineFailed("the WebSocket echo peer did not start: \(line)")
        }
        self.port = port
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(port)/echo")! }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
