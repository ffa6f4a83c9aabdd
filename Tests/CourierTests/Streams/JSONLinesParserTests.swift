import Foundation
import Testing

@testable import Courier

/// One conformance case of JSON Lines: its bytes and the records they must give however they
/// are cut (the last one read at the end of the stream).
struct JSONLinesCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let records: [String]

    init(_ name: String, _ text: String, _ records: [String]) {
        self.init(name, Array(text.utf8), records)
    }

    init(_ name: String, _ bytes: [UInt8], _ records: [String]) {
        self.name = name
        self.bytes = bytes
        self.records = records
    }

    var testDescription: String { name }

    /// How the case fails whole, cut at every byte, byte by byte, and cut at random.
    func splitFailures() -> [String] {
        var cuts: [[Int]] = [[], Array(0...bytes.count)] + (0...bytes.count).map { [$0] }
        for _ in 0..<30 { cuts.append((0..<Int.random(in: 1...6)).map { _ in Int.random(in: 0...bytes.count) }) }
        return cuts.compactMap { cut in
            guard let records = try? parse(cutAt: cut) else { return "cut at \(cut.sorted()): threw" }
            return records == self.records ? nil : "cut at \(cut.sorted()): \(records)"
        }
    }

    func parse(cutAt cuts: [Int]) throws -> [String] {
        var parser = JSONLinesParser(maximumLineLength: 4096)
        var records: [Data] = []
        var start = 0
        for cut in cuts.sorted() + [bytes.count] where cut >= start {
            records += try parser.parse(Data(bytes[start..<cut]))
            start = cut
        }
        if let last = parser.finish() { records.append(last) }
        return records.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// At least 15 cases of JSON Lines, NDJSON and JSON text sequences (RFC 7464).
let jsonLinesCorpus: [JSONLinesCase] = [
    JSONLinesCase("one line", "{\"a\":1}\n", ["{\"a\":1}"]),
    JSONLinesCase("three lines", "1\n2\n3\n", ["1", "2", "3"]),
    JSONLinesCase("CRLF", "{\"a\":1}\r\n{\"a\":2}\r\n", ["{\"a\":1}", "{\"a\":2}"]),
    JSONLinesCase("blank lines are skipped", "1\n\n\n2\n", ["1", "2"]),
    JSONLinesCase("whitespace-only lines are skipped", "1\n  \t \r\n2\n", ["1", "2"]),
    JSONLinesCase("a last line without LF counts", "1\n2", ["1", "2"]),
    JSONLinesCase("a last line with CR only counts", "1\n2\r", ["1", "2"]),
    JSONLinesCase("surrounding spaces are trimmed", "  {\"a\":1}  \n", ["{\"a\":1}"]),
    JSONLinesCase("UTF-8 inside strings", "{\"t\":\"héllo 世界 🎉\"}\n", ["{\"t\":\"héllo 世界 🎉\"}"]),
    JSONLinesCase(
        "JSON text sequence", [0x1E] + Array("{\"a\":1}\n".utf8) + [0x1E] + Array("{\"a\":2}\n".utf8),
        ["{\"a\":1}", "{\"a\":2}"]),
    JSONLinesCase(
        "a sequence without LF between records", [0x1E] + Array("1".utf8) + [0x1E] + Array("2".utf8), ["1", "2"]),
    JSONLinesCase("an empty stream", "", []),
    JSONLinesCase("only blank lines", "\n\r\n\n", []),
    JSONLinesCase("escaped newlines stay inside a string", "{\"t\":\"a\\nb\"}\n", ["{\"t\":\"a\\nb\"}"]),
    JSONLinesCase("arrays and scalars", "[1,2]\n\"x\"\ntrue\nnull\n", ["[1,2]", "\"x\"", "true", "null"]),
    JSONLinesCase(
        "long line among short ones", "1\n" + String(repeating: "7", count: 3000) + "\n2\n",
        ["1", String(repeating: "7", count: 3000), "2"]),
    JSONLinesCase("a lone RS is skipped", [0x1E, 0x0A] + Array("1\n".utf8), ["1"]),
]

@Suite struct JSONLinesParserTests {
    @Test("the corpus has at least 15 cases")
    func corpusSize() {
        #expect(jsonLinesCorpus.count >= 15)
    }

    @Test(
        "each case gives its records whole, cut at every byte, byte by byte, and cut at random",
        arguments: jsonLinesCorpus)
    func everySplit(_ sample: JSONLinesCase) async {
        // Thousands of parses: on a thread of its own, not the one every test's tasks share.
        let failures = await offThePool { sample.splitFailures() }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
    }

    @Test("a line past the limit fails before it ends, so memory stays bounded")
    func lineLimit() {
        var parser = JSONLinesParser(maximumLineLength: 1000)
        let error = #expect(throws: NetworkError.self) {
            for _ in 0..<100 { _ = try parser.parse(Data(repeating: UInt8(ascii: "7"), count: 100)) }
        }
        #expect(error?.code == .responseTooLarge)
        var fine = JSONLinesParser(maximumLineLength: 1000)
        #expect(throws: Never.self) { _ = try fine.parse(Data(String(repeating: "7", count: 1000).utf8 + [0x0A])) }
    }
}
