import Courier
import CourierTesting
import Foundation

extension FuzzTarget {
    static let bodyTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "multipart",
            summary: "every form the encoder accepts parses back (CourierTesting's strict parser) to the same parts",
            check: multipart),
        FuzzTarget(
            name: "request-parser",
            summary: "CourierTesting's HTTP request parser makes the same events however the bytes are split",
            check: requestParser),
    ]

    /// Pieces in turn: a field's name and value, or (a name starting with U+0001) a file's
    /// name, filename and content.
    private static func multipart(_ input: UnsafeRawBufferPointer) {
        var pieces = texts(input)[...]
        var form = MultipartForm()
        while let name = pieces.popFirst() {
            if name.hasPrefix("\u{1}"), let filename = pieces.popFirst(), let content = pieces.popFirst() {
                form.append(name: String(name.dropFirst()), data: Data(content.utf8), filename: filename)
            } else {
                form.append(name: name, value: pieces.popFirst() ?? "")
            }
        }
        guard let prepared = try? MultipartEncoder(form: form).encode(), case .data(let body) = prepared.content,
            let contentType = prepared.contentType
        else { return }
        let request = LoopbackServer.Request(
            method: "POST", target: "/", headers: ["Content-Type": contentType], body: body)
        guard let parts = request.multipartParts else {
            return require(
                false, "the encoder's body does not parse: \(String(decoding: body, as: UTF8.self).debugDescription)")
        }
        let expected =
            form.fields.map { ($0.name, nil as String?, Data($0.value.utf8)) }
            + form.files.map { file -> (String, String?, Data) in
                guard case .data(let data) = file.source else { return (file.name, file.filename, Data()) }
                return (file.name, file.filename, data)
            }
        require(parts.count == expected.count, "\(expected.count) parts sent, \(parts.count) parsed")
        for (part, (name, filename, content)) in zip(parts, expected) {
            require(
                part.name == escaped(name), "name \(name.debugDescription) parsed as \(String(describing: part.name))")
            require(
                part.filename == filename.map(escaped),
                "filename \(String(describing: filename)) parsed as \(String(describing: part.filename))")
            require(part.content == content, "the content of \(name.debugDescription) changed")
        }
    }

    /// How the encoder writes a quoted name (as browsers do): every quote byte as `%22`.
    private static func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 { bytes += byte == 0x22 ? Array("%22".utf8) : [byte] }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func requestParser(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let bytes = Array(input.dropFirst())
        var whole = RequestParser(maximumHeadSize: 1024, maximumBodySize: 4096)
        whole.feed(bytes)
        let wholeEvents = drain(&whole, limit: bytes.count + 2)
        // The same bytes in pieces of 1 to 16.
        let step = Int(first % 16) + 1
        var pieces = RequestParser(maximumHeadSize: 1024, maximumBodySize: 4096)
        var pieceEvents: [RequestParser.Event] = []
        for start in stride(from: 0, to: bytes.count, by: step) {
            pieces.feed(bytes[start..<min(start + step, bytes.count)])
            pieceEvents += drain(&pieces, limit: bytes.count + 2 - pieceEvents.count)
        }
        require(wholeEvents == pieceEvents, "split by \(step): \(wholeEvents) against \(pieceEvents)")
    }

    /// Every event the parser can make now; traps past `limit` (a parser that never stops).
    private static func drain(_ parser: inout RequestParser, limit: Int) -> [RequestParser.Event] {
        var events: [RequestParser.Event] = []
        while let event = parser.next() {
            events.append(event)
            require(events.count <= limit, "more events than bytes: \(events.prefix(8))")
            if case .malformed = event { require(parser.next() == nil, "an event after a malformed one") }
        }
        return events
    }
}
