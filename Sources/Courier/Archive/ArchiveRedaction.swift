import Foundation

/// Hides secrets in what an archive keeps: by name with a ``Redactor``, and by value for what the
/// layers marked as secret (``HTTPRequest/markAsSecret(_:)``).
struct ArchiveRedaction {
    let redactor: Redactor
    /// Known secret values, the longest first (so one that holds another is hidden whole).
    let secretValues: [String]
    /// The forms each known value (of ``shortestHiddenInText`` bytes or more) may take in a
    /// message: as it is, percent-encoded (upper- or lower-case hex, `+` for a space) and
    /// JSON-escaped (`\/` for `/`); the longest first.
    private let needles: [[UInt8]]
    /// The values shorter than that, as they are and percent-encoded, hidden only as a pair's
    /// whole value.
    private let shortValues: [[UInt8]]

    /// A known value shorter than this is hidden only where it is a field's or a pair's whole
    /// value (`u=ab1`): inside other text it could stand for anything.
    static let shortestHiddenInText = 6

    private static let placeholder = Array(Redactor.placeholder.utf8)

    init(redactor: Redactor, secretValues: [String]) {
        self.redactor = redactor
        self.secretValues = Set(secretValues.filter { !$0.isEmpty }).sorted { $0.utf8.count > $1.utf8.count }
        var needles = Set<[UInt8]>()
        for value in self.secretValues where value.utf8.count >= Self.shortestHiddenInText {
            let encoded = PercentEncoding.encode(value)
            for form in [
                value, encoded, Self.lowerCasingEscapes(encoded), value.replacingOccurrences(of: " ", with: "+"),
                value.replacingOccurrences(of: "/", with: "\\/"),
            ] {
                needles.insert(Array(form.utf8))
            }
        }
        self.needles = needles.sorted { $0.count > $1.count }
        self.shortValues = Set(
            self.secretValues.filter { $0.utf8.count < Self.shortestHiddenInText }.flatMap {
                [Array($0.utf8), Array(PercentEncoding.encode($0).utf8)]
            }
        ).sorted { $0.count > $1.count }
    }

    func url(_ text: String) -> String { hidingValues(redactor.redact(url: hidingValues(text))) }

    func field(_ name: String, _ value: String) -> String {
        // A whole value, or a credential after its scheme word (`Token abc`), however short.
        if secretValues.contains(where: { value == $0 || value.hasSuffix(" " + $0) }) { return Redactor.placeholder }
        return hidingValues(redactor.redact(field: name, value: hidingValues(value)))
    }

    func headers(_ headers: HTTPHeaders) -> [HTTPArchive.NameValue] {
        headers.map { HTTPArchive.NameValue(name: $0.name, value: field($0.name, $0.value)) }
    }

    /// Free text (an error's description), its known secret values hidden too.
    func text(_ text: String) -> String { hidingValues(redactor.redact(text: hidingValues(text))) }

    /// A body's bytes, redacted as its media type says (a form, a multipart form, JSON, text;
    /// also when they are not all UTF-8), its known secret values hidden; then at most `limit`
    /// bytes of it, a text cut before a character that would not fit. A body of a binary media
    /// type (an image, audio, video, an archive) whose bytes are not UTF-8 is not read for
    /// names, so it replays as it came; known secret values are hidden in it all the same.
    func body(_ bytes: Data, contentType: String, limit: Int?) -> Data {
        guard !bytes.isEmpty else { return Data() }
        let whole = Array(bytes)
        let binary = Self.isBinary(contentType) && String(bytes: whole, encoding: .utf8) == nil
        let hidden = hidingValues(whole)
        var redacted = binary ? hidden : hidingValues(redactor.redactedWhole(body: hidden, contentType: contentType))
        // Cut only once redacted, so no secret is cut in two and half of it kept.
        guard let limit, redacted.count > max(limit, 0) else { return Data(redacted) }
        let cutInside = !binary && redacted[max(limit, 0)] & 0xC0 == 0x80
        redacted.removeSubrange(max(limit, 0)...)
        if cutInside {
            // Cut inside a character: back to its first byte, and leave that out too.
            while let last = redacted.last, last & 0xC0 == 0x80 { redacted.removeLast() }
            if !redacted.isEmpty { redacted.removeLast() }
        }
        return Data(redacted)
    }

    /// An archive's text with every known secret value hidden wherever it appears, also in
    /// exchanges whose own requests did not carry it (the answer that gave a token).
    func hidingValues(inArchive data: Data) -> Data {
        guard !needles.isEmpty || !shortValues.isEmpty else { return data }
        return Data(hidingValues(Array(data)))
    }

    private func hidingValues(_ text: String) -> String {
        guard !needles.isEmpty || !shortValues.isEmpty else { return text }
        return String(decoding: hidingValues(Array(text.utf8)), as: UTF8.self)
    }

    /// `bytes` with every form of every known secret value replaced by the placeholder: a value
    /// of ``shortestHiddenInText`` bytes or more wherever it appears, a shorter one where it is a
    /// pair's whole value (after `=`, before `&`, a space, a quote, a line's end or the end).
    private func hidingValues(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for needle in needles { bytes = Self.replacing(needle, in: bytes) }
        for value in shortValues { bytes = Self.replacingPairValue(value, in: bytes) }
        return bytes
    }

    /// `=value` followed by a delimiter or the end, with the value replaced.
    private static func replacingPairValue(_ value: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        let delimiters: Set<UInt8> = [0x26, 0x20, 0x22, 0x27, 0x0A, 0x0D, 0x23, 0x3B, 0x2C, 0x09]
        var output: [UInt8] = []
        var index = 0
        var copied = 0
        while index + value.count < bytes.count {
            let end = index + 1 + value.count
            if bytes[index] == UInt8(ascii: "="), bytes[(index + 1)..<end].elementsEqual(value),
                end == bytes.count || delimiters.contains(bytes[end])
            {
                output += bytes[copied...index]
                output += placeholder
                index = end
                copied = end
            } else {
                index += 1
            }
        }
        guard copied > 0 else { return bytes }
        output += bytes[copied...]
        return output
    }

    private static func replacing(_ needle: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        guard let first = needle.first, needle.count <= bytes.count else { return bytes }
        var output: [UInt8] = []
        var index = 0
        var copied = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == first, bytes[index..<(index + needle.count)].elementsEqual(needle) {
                if output.isEmpty { output.reserveCapacity(bytes.count) }
                output += bytes[copied..<index]
                output += placeholder
                index += needle.count
                copied = index
            } else {
                index += 1
            }
        }
        guard copied > 0 else { return bytes }
        output += bytes[copied...]
        return output
    }

    /// `%2F` as `%2f`: the hex digits of each escape in lower case.
    private static func lowerCasingEscapes(_ text: String) -> String {
        var bytes = Array(text.utf8)
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                for offset in 1...2 where bytes[index + offset] >= 0x41 && bytes[index + offset] <= 0x46 {
                    bytes[index + offset] |= 0x20
                }
                index += 3
            } else {
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a media type is bytes no name-based redaction can read: images, audio, video,
    /// fonts, archives and raw bytes.
    static func isBinary(_ contentType: String) -> Bool {
        let type = contentType.lowercased()
        return ["image/", "audio/", "video/", "font/"].contains { type.hasPrefix($0) }
            || [
                "application/octet-stream", "application/pdf", "application/zip", "application/gzip",
                "application/x-protobuf", "application/protobuf", "application/wasm",
            ].contains { type.hasPrefix($0) }
    }
}
