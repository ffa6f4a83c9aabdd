import Foundation

/// How ``DiskCacheStore`` writes an entry: a magic and a version, the entry's metadata as JSON,
/// the body as it is, and a SHA-256 of all that. Each part carries its length; a file whose
/// lengths do not add up to its size exactly (cut off, or with bytes after the end), or whose
/// digest does not match (altered, or blocks lost), does not decode.
enum EntryFormat {
    /// `CourierCache` and the format's version.
    private static let magic = Array("CourierCache".utf8) + [1]
    private static let digestLength = 32

    private struct Metadata: Codable {
        let status: Int
        let headers: [[String]]
        /// Seconds since the reference date, which `Date` holds exactly.
        let storedAt: Double
        let varyingHeaders: [String: String]
    }

    /// The file of an entry, or `nil` for one whose date is not a number.
    static func encode(_ response: CachedResponse) -> Data? {
        let storedAt = response.storedAt.timeIntervalSinceReferenceDate
        guard storedAt.isFinite else { return nil }
        let metadata = Metadata(
            status: response.status, headers: response.headers.fields.map { [$0.name, $0.value] },
            storedAt: storedAt, varyingHeaders: response.varyingHeaders)
        guard let json = try? JSONEncoder().encode(metadata) else { return nil }
        var data = Data(magic)
        append(UInt64(json.count), to: &data)
        data.append(json)
        append(UInt64(response.body.count), to: &data)
        data.append(response.body)
        data.append(contentsOf: Hashing.sha256(data))
        return data
    }

    /// The entry in `data`, or `nil` when it is not one this version wrote whole.
    static func decode(_ data: Data) -> CachedResponse? {
        let bytes = [UInt8](data)
        guard bytes.count >= magic.count + 16 + digestLength, Array(bytes[0..<magic.count]) == magic else { return nil }
        let end = bytes.count - digestLength
        guard Array(bytes[end...]) == Hashing.sha256(Data(bytes[0..<end])) else { return nil }
        var offset = magic.count
        guard let jsonLength = length(in: bytes, at: &offset, before: end), jsonLength <= end - offset else {
            return nil
        }
        let json = Data(bytes[offset..<offset + jsonLength])
        offset += jsonLength
        guard let bodyLength = length(in: bytes, at: &offset, before: end), bodyLength == end - offset,
            let metadata = try? JSONDecoder().decode(Metadata.self, from: json),
            metadata.headers.allSatisfy({ $0.count == 2 }), metadata.storedAt.isFinite
        else { return nil }
        var headers = HTTPHeaders()
        for pair in metadata.headers { headers.append(name: pair[0], value: pair[1]) }
        return CachedResponse(
            HTTPResponse(status: metadata.status, headers: headers, body: Data(bytes[offset..<end])),
            storedAt: Date(timeIntervalSinceReferenceDate: metadata.storedAt), varyingHeaders: metadata.varyingHeaders)
    }

    private static func append(_ value: UInt64, to data: inout Data) {
        for shift in stride(from: 56, through: 0, by: -8) {
            data.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// A big-endian length of 8 bytes at `offset`, which it moves past; `nil` when the bytes run
    /// out before `end` or the length is past what an `Int` holds.
    private static func length(in bytes: [UInt8], at offset: inout Int, before end: Int) -> Int? {
        guard end - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<offset + 8] { value = value << 8 | UInt64(byte) }
        offset += 8
        return Int(exactly: value)
    }
}
