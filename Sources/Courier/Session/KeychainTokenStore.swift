#if canImport(Security)
    import Foundation
    import Security

    /// A ``TokenStore`` in the keychain (Apple platforms): the credential in one generic
    /// password item, written as JSON, in the data protection keychain.
    ///
    /// ```swift
    /// let session = Session(store: KeychainTokenStore(service: "com.example.app.session"))
    /// ```
    ///
    /// A refresh replaces the credential only if the item still holds the one it renewed, in
    /// one step within the process, so a logout or another login that came first always wins.
    /// The keychain has no such step across processes: an app extension that writes the same
    /// item should go through a session of its own, and the app's session takes what it finds
    /// there before it renews the credential (see ``TokenStore``).
    ///
    /// The data protection keychain needs the app to be signed with a keychain entitlement
    /// (an app ID or a keychain access group): an unsigned command-line tool on macOS gets
    /// `errSecMissingEntitlement` (-34018) on every call, as a ``KeychainError``.
    ///
    /// While the device is locked, an item that is only readable after the first unlock, or
    /// while unlocked, cannot be read: the store throws ``KeychainError`` and requests that need
    /// the credential fail with ``NetworkError/Code/credentialStore``.
    public final class KeychainTokenStore: TokenStore {
        /// When the item can be read, as the keychain's accessibility classes say.
        public enum Accessibility: Sendable, Hashable {
            /// While the device is unlocked; moved to a new device with a backup.
            case whenUnlocked
            /// While the device is unlocked; never leaves this device.
            case whenUnlockedThisDeviceOnly
            /// After the first unlock since the device started (so background work can send
            /// requests); moved to a new device with a backup.
            case afterFirstUnlock
            /// After the first unlock since the device started; never leaves this device. The
            /// default.
            case afterFirstUnlockThisDeviceOnly
        }

        /// The item's service (`kSecAttrService`).
        public let service: String
        /// The item's account (`kSecAttrAccount`).
        public let account: String
        /// The keychain access group the item is shared in, or `nil` for the app's own.
        public let accessGroup: String?
        /// When the item can be read.
        public let accessibility: Accessibility
        private let stored: SecretItemCredential

        /// Creates the store; nothing is read or written until the session asks.
        /// - Parameters:
        ///   - service: The item's service, your app's reverse-DNS name, say.
        ///   - account: The item's account; `credential` by default.
        ///   - accessGroup: The keychain access group to share the item in (with an app
        ///     extension), or `nil`.
        ///   - accessibility: When the item can be read.
        public init(
            service: String, account: String = "credential", accessGroup: String? = nil,
            accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly
        ) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
            self.accessibility = accessibility
            stored = SecretItemCredential(
                KeychainItem(service: service, account: account, accessGroup: accessGroup, accessibility: accessibility)
            )
        }

        /// The stored credential, or `nil`.
        /// - Returns: The credential.
        /// - Throws: ``KeychainError`` when the keychain cannot be read.
        public func credential() async throws -> Credential? {
            try stored.credential()
        }

        /// Stores the credential, or removes it (`nil`).
        /// - Parameter credential: The new credential.
        /// - Throws: ``KeychainError`` when the keychain cannot be written.
        public func setCredential(_ credential: Credential?) async throws {
            try stored.setCredential(credential)
        }

        /// Stores `credential` if the stored one is still `expected`, in one step within the
        /// process.
        /// - Parameters:
        ///   - expected: The credential the refresh replaces.
        ///   - credential: The new credential.
        /// - Returns: Whether it was stored.
        /// - Throws: ``KeychainError`` when the keychain cannot be read or written.
        public func replaceCredential(_ expected: Credential?, with credential: Credential) async throws -> Bool {
            try stored.replaceCredential(expected, with: credential)
        }
    }

    /// A keychain call that failed, with the `OSStatus` it returned (`errSecInteractionNotAllowed`,
    /// -25308, while the device is locked).
    public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The `OSStatus`.
        public let status: Int32

        /// `Keychain error -25308`.
        public var description: String { "Keychain error \(status)" }
    }

    /// The generic password item of a ``KeychainTokenStore``.
    struct KeychainItem: SecretItem {
        let service: String
        let account: String
        let accessGroup: String?
        let accessibility: KeychainTokenStore.Accessibility

        /// What names the item.
        private var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func read() throws -> Data? {
            var query = self.query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw KeychainError(status: status) }
            return result as? Data
        }

        func write(_ data: Data) throws {
            let attributes: [String: Any] = [
                kSecValueData as String: data, kSecAttrAccessible as String: accessibility.attribute,
            ]
            // Replace the item; add it when there is none (once more as a replacement when
            // another process added it meanwhile).
            for _ in 0..<2 {
                let updated = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
                if updated == errSecSuccess { return }
                guard updated == errSecItemNotFound else { throw KeychainError(status: updated) }
                let added = SecItemAdd(query.merging(attributes) { _, new in new } as CFDictionary, nil)
                if added == errSecSuccess { return }
                guard added == errSecDuplicateItem else { throw KeychainError(status: added) }
            }
            throw KeychainError(status: errSecDuplicateItem)
        }

        func delete() throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
        }
    }

    extension KeychainTokenStore.Accessibility {
        /// The `kSecAttrAccessible` value.
        var attribute: CFString {
            switch self {
            case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
            case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            }
        }
    }
#endif
