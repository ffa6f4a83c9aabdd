import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The disk store: entries that survive a relaunch, files only this user reads, nothing
/// half-written ever read, and a bound in bytes.
@Suite struct DiskCacheStoreTests {
    private func entry(_ bytes: Int, at seconds: TimeInterval = 1_700_000_000) -> CachedResponse {
        let headers = HTTPHeaders([
            .init(name: "Content-Type", value: "application/json"), .init(name: "X-Tag", value: "a"),
            .init(name: "X-Tag", value: "b"),
        ])
        return CachedResponse(
            HTTPResponse(status: 203, headers: headers, body: patternedBytes(bytes)),
            storedAt: Date(timeIntervalSince1970: seconds + 0.123_456_789), varyingHeaders: ["x-region": "east"])
    }

    /// A key whose hex digits end in `name` (hex digits only).
    private func key(_ name: String) -> CacheKey {
        CacheKey(rawValue: String(repeating: "0", count: 64 - name.count) + name)!
    }

    /// The size of an entry's file, to set limits in whole entries.
    private func fileSize(of entry: CachedResponse) async throws -> Int {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        try await store.store(entry, for: key("00"))
        return store.byteCount
    }

    private func mode(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? NSNumber)?.intValue ?? 0
            & 0o777
    }

    @Test("an entry written by one store is read whole by the next one on the same directory")
    func survivesRelaunch() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let written = entry(70_000)
        try await DiskCacheStore(directory: folder.url).store(written, for: key("a1"))

        let reopened = try DiskCacheStore(directory: folder.url)
        let read = await reopened.response(for: key("a1"))

        #expect(read == written)
        #expect(read?.headers.fields.filter { $0.name == "X-Tag" }.map(\.value) == ["a", "b"])
        #expect(reopened.count == 1 && reopened.byteCount > 70_000)
    }

    @Test("the directory is 0700 (one made by others with wider modes too) and every entry file 0600")
    func permissions() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let directory = folder.file("answers")
        let wide = folder.file("wide")
        try FileManager.default.createDirectory(at: wide, withIntermediateDirectories: false)
        _ = chmod(wide.path, 0o755)
        let store = try DiskCacheStore(directory: directory)
        try await store.store(entry(10), for: key("a1"))
        _ = try DiskCacheStore(directory: wide)

        #expect(mode(directory) == 0o700)
        #expect(mode(wide) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1)
        #expect(files.allSatisfy { mode(directory.appendingPathComponent($0)) == 0o600 })
    }

    @Test(
        "an entry cut off, with bytes after its end, of another version, or of garbage is a miss, and its file goes",
        arguments: ["cut", "longer", "version", "garbage", "empty", "flipped", "huge length"])
    func unreadable(_ damage: String) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        try await store.store(entry(5_000), for: key("a1"))
        let file = folder.file(key("a1").rawValue + ".entry")
        var bytes = try Data(contentsOf: file)
        switch damage {
        case "cut": bytes = bytes.prefix(bytes.count / 2)
        case "longer": bytes.append(0)
        case "version": bytes[12] = 2
        case "garbage": bytes = Data("not an entry at all".utf8)
        case "flipped": bytes[bytes.count / 2] ^= 0x01
        case "huge length": bytes.replaceSubrange(13..<21, with: [UInt8](repeating: 0xFF, count: 8))
        default: bytes = Data()
        }
        try bytes.write(to: file)

        #expect(await store.response(for: key("a1")) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(store.count == 0)
    }

    @Test("what a killed process left half-written is removed when the next store opens, and never read")
    func partialLeftovers() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        // A whole entry's bytes, left under the name of a write that never reached its rename.
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        try await DiskCacheStore(directory: scratch.url).store(entry(100), for: key("a1"))
        let partial = folder.file(key("a1").rawValue + ".\(UUID().uuidString).partial")
        try FileManager.default.copyItem(at: scratch.file(key("a1").rawValue + ".entry"), to: partial)
        let unrelated = folder.file("notes.partial")
        try Data("someone else's".utf8).write(to: unrelated)

        let store = try DiskCacheStore(directory: folder.url)

        #expect(!FileManager.default.fileExists(atPath: partial.path))
        #expect(FileManager.default.fileExists(atPath: unrelated.path), "not a name this store writes")
        #expect(await store.response(for: key("a1")) == nil)
        #expect(store.count == 0)
    }

    @Test("an entry file that is a symbolic link or a pipe is not read, and its target is left alone")
    func notPlainFiles() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        try await store.store(entry(100), for: key("b2"))
        let valid = folder.file(key("b2").rawValue + ".entry")
        try FileManager.default.createSymbolicLink(
            at: folder.file(key("a1").rawValue + ".entry"), withDestinationURL: valid)
        #expect(mkfifo(folder.file(key("c3").rawValue + ".entry").path, 0o600) == 0)

        #expect(await store.response(for: key("a1")) == nil)
        #expect(await store.response(for: key("c3")) == nil, "and did not wait for a writer")
        #expect(await store.response(for: key("b2")) != nil)
        #expect(FileManager.default.fileExists(atPath: valid.path))
    }

    @Test(
        "a directory swapped for a link to another after the store opened it: the store reads and writes only its own")
    func directorySwapped() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let mine = folder.file("answers")
        let store = try DiskCacheStore(directory: mine)
        try await store.store(entry(100, at: 1), for: key("a1"))
        // Another directory with a forged entry under the same key, and the store's directory
        // moved away and replaced by a link to it.
        let forged = folder.file("forged")
        try await DiskCacheStore(directory: forged).store(entry(100, at: 2), for: key("a1"))
        let moved = folder.file("moved")
        try FileManager.default.moveItem(at: mine, to: moved)
        try FileManager.default.createSymbolicLink(at: mine, withDestinationURL: forged)

        let read = await store.response(for: key("a1"))
        try await store.store(entry(100, at: 3), for: key("b2"))

        #expect(read?.storedAt == entry(100, at: 1).storedAt, "its own entry, not the forged one")
        let written = key("b2").rawValue + ".entry"
        #expect(FileManager.default.fileExists(atPath: moved.appendingPathComponent(written).path))
        #expect(!FileManager.default.fileExists(atPath: forged.appendingPathComponent(written).path))
    }

    @Test("an entry file that belongs to another user is not read, and is removed", .enabled(if: geteuid() == 0))
    func foreignOwner() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        try await store.store(entry(100), for: key("a1"))
        let file = folder.file(key("a1").rawValue + ".entry")
        #expect(chown(file.path, 4_321, 4_321) == 0)

        #expect(await store.response(for: key("a1")) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))

        // One found when a store opens is not counted, and goes too.
        try await store.store(entry(100), for: key("b2"))
        let other = folder.file(key("b2").rawValue + ".entry")
        #expect(chown(other.path, 4_321, 4_321) == 0)
        let reopened = try DiskCacheStore(directory: folder.url)
        #expect(reopened.count == 0)
        #expect(!FileManager.default.fileExists(atPath: other.path))
    }

    @Test("past its limit the least recently used entries go first")
    func bounded() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let size = try await fileSize(of: entry(10_000))
        let store = try DiskCacheStore(directory: folder.url, limit: size * 3)
        for name in ["a1", "b2", "c3"] { try await store.store(entry(10_000), for: key(name)) }
        _ = await store.response(for: key("a1"))
        try await store.store(entry(10_000), for: key("d4"))

        #expect(await store.response(for: key("b2")) == nil)
        #expect(store.count == 3 && store.byteCount <= size * 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).count == 3)

        try await store.store(entry(20_000), for: key("e5"))
        #expect(store.byteCount <= size * 3)
        try await store.store(entry(size * 4), for: key("f6"))
        #expect(await store.response(for: key("f6")) == nil, "larger than the whole limit")
    }

    @Test("opened again with a smaller limit, it keeps the most recently used entries that fit")
    func reopenedSmaller() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let size = try await fileSize(of: entry(10_000))
        let store = try DiskCacheStore(directory: folder.url, limit: size * 3)
        // Last used (the files' times, which a read sets): b2 first, then c3, then a1; set by
        // hand, as a file system may keep whole seconds only.
        for (name, seconds) in [("b2", 1_000.0), ("c3", 2_000), ("a1", 3_000)] {
            try await store.store(entry(10_000), for: key(name))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: seconds)],
                ofItemAtPath: folder.url.appendingPathComponent(key(name).rawValue + ".entry").path)
        }

        let smaller = try DiskCacheStore(directory: folder.url, limit: size * 2)

        #expect(smaller.count == 2 && smaller.byteCount == size * 2)
        #expect(await smaller.response(for: key("b2")) == nil, "the least recently used")
        #expect(await smaller.response(for: key("a1")) != nil)
        #expect(await smaller.response(for: key("c3")) != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).count == 2)
    }

    @Test("removeAll() removes every entry file")
    func removeAll() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        for name in ["a1", "b2"] { try await store.store(entry(100), for: key(name)) }

        try await store.removeAll()

        #expect(store.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test("many tasks writing and reading the same keys at once read only whole entries")
    func concurrent() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskCacheStore(directory: folder.url)
        let entries = (0..<4).map { entry(1_000 * ($0 + 1), at: 1_700_000_000 + Double($0)) }
        let keys = (0..<4).map { key("e\($0)") }
        // Every key holds an entry from the start; only the last two are ever removed, so reads
        // of the first two always find one.
        for (entry, key) in zip(entries, keys) { try await store.store(entry, for: key) }

        let reads = try await withThrowingTaskGroup(of: CachedResponse?.self) { group in
            for index in 0..<400 {
                group.addTask {
                    switch index % 5 {
                    case 0, 1:
                        try await store.store(entries[index % 4], for: keys[(index / 5) % 4])
                        return nil
                    case 2: await store.removeResponse(for: keys[2 + (index / 5) % 2])
                    default: return await store.response(for: keys[(index / 5) % 4])
                    }
                    return nil
                }
            }
            return try await group.reduce(into: [CachedResponse]()) { if let read = $1 { $0.append(read) } }
        }

        #expect(!reads.isEmpty && reads.allSatisfy { entries.contains($0) })
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(names.allSatisfy { $0.hasSuffix(".entry") }, "no partial file left: \(names)")
        let sizes = try names.map { try Data(contentsOf: folder.file($0)).count }
        #expect(store.count == names.count && store.byteCount == sizes.reduce(0, +))
    }

    @Test("through the client: an answer stored before a relaunch answers after it, with no request")
    func clientAcrossRelaunch() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try LoopbackServer()
        defer { server.stop() }
        let relaunched = Flag()
        server.route("/orders") { _ in
            let answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            return relaunched.isSet ? answer.with(.closeBeforeResponding) : answer
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)
        func client() throws -> NetworkClient {
            var configuration = NetworkClient.Configuration(baseURL: server.baseURL, transport: TestTransport.make())
            configuration.cache = ResponseCache(store: try DiskCacheStore(directory: folder.url))
            return NetworkClient(configuration: configuration)
        }

        _ = try await client().send(endpoint)
        relaunched.set()
        let reply = try await client().reply(to: endpoint)

        #expect(reply.value == [Order(id: 1, title: "Tea")])
        #expect(reply.cached?.isStale == true)
    }
}
