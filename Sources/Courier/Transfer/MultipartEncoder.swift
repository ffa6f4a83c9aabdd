import Foundation

/// Builds the bytes of a ``MultipartForm`` in memory or in a temporary file, checking that the
/// boundary occurs in no part's content (another is drawn when it does).
///
/// ```text
/// --BOUNDARY\r\n
/// Content-Disposition: form-data; name="title"\r\n
/// \r\n
/// Holiday\r\n
/// --BOUNDARY\r\n
/// Content-Disposition: form-data; name="photo"; filename="beach.jpg"\r\n
/// Content-Type: image/jpeg\r\n
/// \r\n
/// <bytes>\r\n
/// --BOUNDARY--\r\n
/// ```
package struct MultipartEncoder {
    let form: MultipartForm
    let cancellation: Blocking.Flag

    init(form: MultipartForm, cancellation: Blocking.Flag) {
        self.form = form
        self.cancellation = cancellation
    }

    /// An encoder nothing cancels (for the fuzz target).
    package init(form: MultipartForm) { self.init(form: form, cancellation: Blocking.Flag()) }

    /// The size of the pieces files are read in.
    static let chunkSize = 1 << 20
    /// How many boundaries are drawn before giving up (each collides with odds of 2⁻¹⁹⁰).
    static let attempts = 8

    /// A boundary was found in the content; start again with another.
    private struct Collision: Error {}

    package func encode() throws(NetworkError) -> PreparedBody {
        try form.validate()
        var fileLengths: [Int64] = []
        for file in form.files {
            switch file.source {
            case .data(let data): fileLengths.append(Int64(data.count))
            case .file(let url): fileLengths.append(try FileSource.length(of: url))
            }
        }
        for _ in 0..<Self.attempts {
            let boundary = form.makeBoundary()
            let contentType = "multipart/form-data; boundary=\(boundary)"
            let length = Self.length(of: form, fileLengths: fileLengths, boundary: boundary)
            do {
                if length <= form.memoryThreshold {
                    return PreparedBody(.data(try inMemory(boundary: boundary)), contentType: contentType)
                }
                let file = try toTemporaryFile(boundary: boundary, expectedLength: length)
                return PreparedBody(.file(file, length: length), contentType: contentType, temporaryFile: file)
            } catch is Collision {
                continue
            } catch let error as NetworkError {
                throw error
            } catch {
                throw NetworkError(.fileSystem, "The multipart body could not be written.", underlying: error)
            }
        }
        throw NetworkError(.invalidRequest, "No multipart boundary could be found that the content does not contain.")
    }

    // MARK: - Layout

    /// `"` as `%22`, as browsers write it. Replaced by scalars: as characters, a quote
    /// followed by a combining mark is not a quote, yet it is one on the wire.
    private static func escaped(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\"" { escaped.append(contentsOf: "%22".unicodeScalars) } else { escaped.append(scalar) }
        }
        return String(escaped)
    }

    private static func head(boundary: String, name: String, file: MultipartForm.File?) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(name))\""
        if let file {
            text += "; filename=\"\(escaped(file.filename))\"\r\nContent-Type: \(file.contentType)"
        }
        return Data((text + "\r\n\r\n").utf8)
    }

    private static func closing(boundary: String) -> Data { Data("--\(boundary)--\r\n".utf8) }

    private static let lineBreak = Data("\r\n".utf8)

    /// The exact body length, computed before writing so progress has a total.
    private static func length(of form: MultipartForm, fileLengths: [Int64], boundary: String) -> Int64 {
        var total = Int64(closing(boundary: boundary).count)
        for field in form.fields.items {
            total += Int64(head(boundary: boundary, name: field.name, file: nil).count + field.value.utf8.count + 2)
        }
        for (file, length) in zip(form.files, fileLengths) {
            total += Int64(head(boundary: boundary, name: file.name, file: file).count + 2) + length
        }
        return total
    }

    // MARK: - Writing

    private func inMemory(boundary: String) throws -> Data {
        let needle = Array(boundary.utf8)
        var body = Data()
        for field in form.fields.items {
            let value = Data(field.value.utf8)
            if ByteSearch.contains(value, needle) { throw Collision() }
            body.append(Self.head(boundary: boundary, name: field.name, file: nil))
            body.append(value)
            body.append(Self.lineBreak)
        }
        for file in form.files {
            let content: Data
            switch file.source {
            case .data(let data): content = data
            case .file(let url): content = try Data(contentsOf: url)
            }
            if ByteSearch.contains(content, needle) { throw Collision() }
            body.append(Self.head(boundary: boundary, name: file.name, file: file))
            body.append(content)
            body.append(Self.lineBreak)
        }
        body.append(Self.closing(boundary: boundary))
        return body
    }

    private func toTemporaryFile(boundary: String, expectedLength: Int64) throws -> URL {
        let directory = form.temporaryDirectory ?? FileManager.default.temporaryDirectory
        let url = directory.appendingPathComponent("courier-upload-\(UUID().uuidString).multipart")
        // 0600 from the first instant, never through a symbolic link.
        let output = try PrivateFile.create(at: url)
        defer { try? output.close() }
        do {
            let needle = Array(boundary.utf8)
            for field in form.fields.items {
                let value = Data(field.value.utf8)
                if ByteSearch.contains(value, needle) { throw Collision() }
                try output.write(contentsOf: Self.head(boundary: boundary, name: field.name, file: nil) + value)
                try output.write(contentsOf: Self.lineBreak)
            }
            for file in form.files {
                try output.write(contentsOf: Self.head(boundary: boundary, name: file.name, file: file))
                try copy(file.source, to: output, needle: needle)
                try output.write(contentsOf: Self.lineBreak)
            }
            try output.write(contentsOf: Self.closing(boundary: boundary))
            let written = try output.offset()
            guard Int64(written) == expectedLength else {
                throw NetworkError(.invalidRequest, "A file changed size while the multipart body was being written.")
            }
            return url
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// Copies one file part, in pieces, checking each (with the tail of the one before) for the
    /// boundary and the flag for cancellation.
    private func copy(_ source: MultipartForm.File.Source, to output: FileHandle, needle: [UInt8]) throws {
        switch source {
        case .data(let data):
            if ByteSearch.contains(data, needle) { throw Collision() }
            try output.write(contentsOf: data)
        case .file(let url):
            let input = try FileHandle(forReadingFrom: url)
            defer { try? input.close() }
            var tail = Data()
            while let chunk = try input.read(upToCount: Self.chunkSize), !chunk.isEmpty {
                try cancellation.check()
                if ByteSearch.contains(tail + chunk, needle) { throw Collision() }
                try output.write(contentsOf: chunk)
                tail = chunk.suffix(needle.count - 1)
            }
        }
    }
}

/// Finds a byte string in data: `memchr` to the first byte, then a comparison.
enum ByteSearch {
    static func contains(_ haystack: Data, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard let base = bytes.baseAddress else { return false }
            var offset = 0
            let last = bytes.count - needle.count
            while offset <= last {
                guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
                let position = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + position, needle, needle.count) == 0 { return true }
                offset = position + 1
            }
            return false
        }
    }
}
