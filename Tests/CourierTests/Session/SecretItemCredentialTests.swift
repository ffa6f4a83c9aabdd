import Foundation
import Testing

@testable import Courier

/// The part of the keychain store every platform shares: a credential in one secret item,
/// written whole and replaced in one step. The keychain calls themselves are Apple's; here the
/// item is in memory.
@Suite struct SecretItemCredentialTests {
    /// An item in memory that counts its writes, and fails every call while `failing` is set.
    final class MemoryItem: SecretItem, @unchecked Sendable {
        struct Locked: Error {}
        private let lock = NSLock()
        private var bytes: Data?
        private var writes = 0
        private var failing = false

        init(_ bytes: Data? = nil) { self.bytes = bytes }
        var stored: Data? { lock.withLock { bytes } }
        var writeCount: Int { lock.withLock { writes } }
        func fail() { lock.withLock { failing = true } }

        func read() throws -> Data? {
            try lock.withLock {
                guard !failing else { throw Locked() }
                return bytes
            }
        }
        func write(_ data: Data) throws {
            try lock.withLock {
                guard !failing else { throw Locked() }
                writes += 1
                bytes = data
            }
        }
        func delete() throws {
            try lock.withLock {
                guard !failing else { throw Locked() }
                bytes = nil
            }
        }
    }

    static let ann = Credential(
        accessToken: "a1", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 1_700_000_000), userID: "ann")

    @Test("a credential is written whole, with its expiry in seconds since 1970, and read back the same")
    func roundTrip() throws {
        let item = MemoryItem()
        let store = SecretItemCredential(item)
        try store.setCredential(Self.ann)
        let written = try #require(item.stored)
        let object = try JSONSerialization.jsonObject(with: written) as? [String: Any]
        #expect(object?["expiresAt"] as? Double == 1_700_000_000)
        #expect(object?["userID"] as? String == "ann")
        #expect(try store.credential() == Self.ann)
        try store.setCredential(nil)
        #expect(item.stored == nil, "a logout removes the item")
        #expect(try store.credential() == nil)
    }

    @Test("a replacement happens only over the credential it expects")
    func replace() throws {
        let item = MemoryItem()
        let store = SecretItemCredential(item)
        let bob = Credential(accessToken: "b1", userID: "bob")
        #expect(try store.replaceCredential(nil, with: Self.ann))
        #expect(!(try store.replaceCredential(nil, with: bob)), "no longer empty")
        #expect(!(try store.replaceCredential(bob, with: bob)))
        #expect(try store.credential() == Self.ann)
        try store.setCredential(nil)
        #expect(!(try store.replaceCredential(Self.ann, with: bob)), "a logout came first")
        #expect(try store.credential() == nil)
        #expect(item.writeCount == 1)
    }

    @Test("bytes another program wrote are nobody signed in, and a login replaces them")
    func foreignBytes() throws {
        let store = SecretItemCredential(MemoryItem(Data("not a credential".utf8)))
        #expect(try store.credential() == nil)
        #expect(try store.replaceCredential(nil, with: Self.ann))
        #expect(try store.credential() == Self.ann)
    }

    @Test("of many replacements from one credential at once, exactly one lands")
    func oneReplacementWins() async throws {
        let item = MemoryItem()
        let store = SecretItemCredential(item)
        try store.setCredential(Self.ann)
        let wins = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<100 {
                group.addTask {
                    (try? store.replaceCredential(Self.ann, with: Credential(accessToken: "t\(index)"))) ?? false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
        #expect(item.writeCount == 2)
    }

    @Test("an item that cannot be read or written throws its own error")
    func lockedItem() async throws {
        let item = MemoryItem()
        item.fail()
        let store = SecretItemCredential(item)
        #expect(throws: MemoryItem.Locked.self) { try store.credential() }
        #expect(throws: MemoryItem.Locked.self) { try store.setCredential(Self.ann) }
    }
}
