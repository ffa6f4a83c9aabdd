import Foundation

/// The TCP connections to a loopback port in this network namespace, read from
/// `/proc/net/tcp`: how a test sees that a transport closed a connection it gave up on (a
/// descriptor kept open shows as `ESTABLISHED` or, once the server closed its side,
/// `CLOSE_WAIT`). Linux only: where the table cannot be read, every count is 0.
enum OpenSockets {
    /// The whole of `/proc/net/tcp`, read to its end: /proc files report no size, and a one-shot
    /// read stops at 4 KB, which leaves out every connection past the first few dozen.
    private static func table() -> String? {
        FileHandle(forReadingAtPath: "/proc/net/tcp").map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) }
    }

    /// How many open connections go to 127.0.0.1:`port`.
    static func count(to port: Int) -> Int {
        guard let table = table() else { return 0 }
        let remote = String(format: "0100007F:%04X", port)
        let open: Set<Substring> = ["01", "08"]  // ESTABLISHED, CLOSE_WAIT
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && open.contains(fields[3])
        }.count
    }

    /// How many bytes wait unread on the open connections to 127.0.0.1:`port`: what
    /// the server sent that the client has not read (the `rx_queue` column).
    static func unreadBytes(from port: Int) -> Int {
        guard let table = table() else { return 0 }
        let remote = String(format: "0100007F:%04X", port)
        let open: Set<Substring> = ["01", "08"]  // ESTABLISHED, CLOSE_WAIT
        return table.split(separator: "\n").dropFirst().reduce(0) { sum, line in
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[2] == remote, open.contains(fields[3]),
                let queues = fields[4].split(separator: ":").last, let unread = Int(queues, radix: 16)
            else { return sum }
            return sum + unread
        }
    }

    /// Whether every connection to `port` is closed within `limit` (a transport closes a
    /// failed connection on its own thread, a moment after answering; on a loaded machine that
    /// moment can be seconds, and a connection left open stays open however long one waits).
    static func none(to port: Int, within limit: Duration = .seconds(30) * TestTiming.scale) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while count(to: port) > 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
