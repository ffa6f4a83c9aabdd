import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a command to its end with `posix_spawn`, feeding its standard input and collecting its
/// standard output.
///
/// Not Foundation's `Process`: on Linux, `Process.run()` before swift-corelibs-foundation pull
/// request 5472 (Swift 6.3.1 among them) copies a whole 256-byte name out of each directory
/// entry while it looks for descriptors to close, reading past the end of its buffer; now and
/// then that crashes the test run ("Bad pointer dereference" in `Process.run()`).
enum Subprocess {
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its Swift
    /// module does not declare.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `path` with `arguments`, writes `input` to its standard input (then closes it) and
    /// returns what it wrote to its standard output. Its standard error is the test run's, or
    /// nowhere when `quiet`.
    /// - Throws: ``Failed`` when it cannot start or does not exit with status 0.
    static func run(_ path: String, _ arguments: [String], input: Data = Data(), quiet: Bool = false) throws -> Data {
        let (output, status) = try spawn(path, arguments, input: input, quiet: quiet)
        guard status == 0 else {
            throw Failed(description: "\(path) \(arguments.joined(separator: " ")) exited with status \(status)")
        }
        return output
    }

    /// ``run(_:_:input:quiet:)`` on a thread of its own, so that a slow child (Python starting
    /// on a busy machine) holds no thread of Swift's pool, which every other test shares.
    static func runOnItsOwnThread(
        _ path: String, _ arguments: [String], input: Data = Data(), quiet: Bool = false
    ) async throws -> Data {
        try await offThePool { Result { try run(path, arguments, input: input, quiet: quiet) as Data } }.get()
    }

    /// Runs `path` with `arguments` to its end, its output and errors discarded, and returns its
    /// exit status.
    /// - Throws: ``Failed`` when it cannot start or ends by a signal.
    static func exitStatus(_ path: String, _ arguments: [String]) throws -> Int32 {
        try spawn(path, arguments, input: Data(), quiet: true).status
    }

    /// Starts `path` with `arguments` in the background, its input, output and errors on
    /// `/dev/null`; end it with `kill` and reap it with ``wait(_:)``.
    /// - Throws: ``Failed`` when it cannot start.
    static func start(_ path: String, _ arguments: [String]) throws -> pid_t {
        try spawnChild(path, arguments) { actions in
            for fd: Int32 in 0...2 {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
    }

    /// Starts `path` with `arguments`, its descriptors 0 to 2 as `arrange` sets them and every
    /// other descriptor of the test run (sockets among them) closed in the child.
    private static func spawnChild(
        _ path: String, _ arguments: [String], arrange: (inout posix_spawn_file_actions_t) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        arrange(&actions)
        _ = Self.closeFrom?(&actions, 3)
        let argv = ([path] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv + [nil], environ)
        guard spawned == 0 else { throw Failed(description: "\(path) did not start: error \(spawned)") }
        return pid
    }

    /// Waits for a process ``start(_:_:)`` started to end.
    static func wait(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    /// Runs `path` to its end: what it wrote to its standard output, and its exit status.
    private static func spawn(_ path: String, _ arguments: [String], input: Data, quiet: Bool) throws -> (
        output: Data, status: Int32
    ) {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { throw Failed(description: "pipe: errno \(errno)") }
        defer { for fd in toChild where fd >= 0 { close(fd) } }
        guard pipe(&fromChild) == 0 else { throw Failed(description: "pipe: errno \(errno)") }
        defer { for fd in fromChild where fd >= 0 { close(fd) } }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        let pid = try spawnChild(path, arguments) { [input = toChild[0], output = fromChild[1]] actions in
            posix_spawn_file_actions_adddup2(&actions, input, 0)
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        }
        close(toChild[0])
        toChild[0] = -1
        close(fromChild[1])
        fromChild[1] = -1

        // Written on a thread of its own, so a child that writes a lot before it reads cannot
        // block both ends.
        let inputClosed = DispatchSemaphore(value: 0)
        let writer = Thread { [fd = toChild[1]] in
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { break }
                    offset += written
                }
            }
            close(fd)
            inputClosed.signal()
        }
        toChild[1] = -1  // the writer closes it
        writer.start()

        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fromChild[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: buffer[0..<count])
        }
        inputClosed.wait()

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // Exited normally, not by a signal.
        guard status & 0x7f == 0 else {
            throw Failed(description: "\(path) \(arguments.joined(separator: " ")) ended with wait status \(status)")
        }
        return (output, (status >> 8) & 0xff)
    }
}
