import Foundation

/// This process's TCP connections to a loopback port, read from `/proc/net/tcp`: how a test
/// sees that a transport closed a connection it gave up on (a descriptor kept open shows as
/// `ESTABLISHED` or, once the server closed its side, `CLOSE_WAIT`).
enum OpenSockets {
    /// How many open connections go to 127.0.0.1:`port`.
    static func count(to port: Int) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return 0 }
        let remote = String(format: "0100007F:%04X", port)
        let open: Set<Substring> = ["01", "08"]  // ESTABLISHED, CLOSE_WAIT
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && open.contains(fields[3])
        }.count
    }

    /// Whether every connection to `port` is closed within `limit` (a transport closes a
    /// failed connection on its own thread, a moment after answering).
    static func none(to port: Int, within limit: Duration = .seconds(2)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while count(to: port) > 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
