import Foundation

/// One secret item of the system's store (a keychain item): its bytes read, written and removed
/// whole. The platform's part of a ``TokenStore`` over it; the rest, which every platform
/// shares, is ``SecretItemCredential``.
protocol SecretItem: Sendable {
    /// The item's bytes, or `nil` when there is no item.
    func read() throws -> Data?
    /// Writes the item, adding it or replacing its bytes.
    func write(_ data: Data) throws
    /// Removes the item; one that is not there is no error.
    func delete() throws
}

/// A credential kept in one ``SecretItem``: written as JSON (the expiry in seconds since 1970),
/// read back whole, and replaced in one step within the process, so a session's refresh never
/// overwrites a logout or another login that came first. Bytes that are not a credential (an
/// item another program wrote) read as nobody signed in.
///
/// `@unchecked Sendable`: every read-then-write runs under `lock`; the item is `Sendable`.
final class SecretItemCredential: @unchecked Sendable {
    private let item: any SecretItem
    private let lock = NSLock()

    init(_ item: any SecretItem) { self.item = item }

    /// The stored credential, or `nil`.
    /// - Throws: What the item throws (a locked keychain).
    func credential() throws -> Credential? {
        try lock.withLock { try item.read().flatMap(Self.decoded) }
    }

    /// Stores `credential`, or removes it when `nil`.
    /// - Throws: What the item throws.
    func setCredential(_ credential: Credential?) throws {
        try lock.withLock {
            if let credential { try item.write(Self.encoded(credential)) } else { try item.delete() }
        }
    }

    /// Stores `credential` if the stored one is still `expected`, in one step.
    /// - Returns: Whether it was stored.
    /// - Throws: What the item throws.
    func replaceCredential(_ expected: Credential?, with credential: Credential) throws -> Bool {
        try lock.withLock {
            guard try item.read().flatMap(Self.decoded) == expected else { return false }
            try item.write(Self.encoded(credential))
            return true
        }
    }

    static func encoded(_ credential: Credential) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(credential)
    }

    static func decoded(_ data: Data) -> Credential? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(Credential.self, from: data)
    }
}
