import Foundation
import Testing

@testable import Courier

/// One conformance case of the event-stream format: its bytes, and the events (type, data,
/// ID) and reconnection time they must give however they are cut.
struct EventStreamCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let events: [EventStreamParser.Event]
    let retry: Int?

    init(_ name: String, _ text: String, _ events: [(String, String, String)], retry: Int? = nil) {
        self.init(name, Array(text.utf8), events, retry: retry)
    }

    init(_ name: String, _ bytes: [UInt8], _ events: [(String, String, String)], retry: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.events = events.map { EventStreamParser.Event(type: $0.0, data: $0.1, id: $0.2) }
        self.retry = retry
    }

    var testDescription: String { name }

    /// How the case fails whole, cut at every byte, byte by byte, and cut at random: one line
    /// per cut that gave other events or another reconnection time.
    func splitFailures() -> [String] {
        var cuts: [[Int]] = [[], Array(0...bytes.count)] + (0...bytes.count).map { [$0] }
        for _ in 0..<30 { cuts.append((0..<Int.random(in: 1...6)).map { _ in Int.random(in: 0...bytes.count) }) }
        return cuts.compactMap { cut in
            guard let (events, retry) = try? parse(cutAt: cut) else { return "cut at \(cut.sorted()): threw" }
            guard events == self.events, retry == self.retry else {
                return "cut at \(cut.sorted()): \(events), retry \(String(describing: retry))"
            }
            return nil
        }
    }

    /// The events and reconnection time of the bytes cut at `cuts`.
    func parse(cutAt cuts: [Int]) throws -> ([EventStreamParser.Event], Int?) {
        var parser = EventStreamParser(maximumLineLength: 4096, maximumEventSize: 4096)
        var events: [EventStreamParser.Event] = []
        var start = 0
        for cut in cuts.sorted() + [bytes.count] where cut >= start {
            events += try parser.parse(Data(bytes[start..<cut]))
            start = cut
        }
        // The `setsID` flag is the reader's business, not the format's.
        return (events.map { EventStreamParser.Event(type: $0.type, data: $0.data, id: $0.id) }, parser.retry)
    }
}

/// At least 40 cases of the WHATWG event-stream rules.
let eventStreamCorpus: [EventStreamCase] = [
    EventStreamCase("one event", "data: hello\n\n", [("message", "hello", "")]),
    EventStreamCase("two events", "data: a\n\ndata: b\n\n", [("message", "a", ""), ("message", "b", "")]),
    EventStreamCase("CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", [("message", "a", ""), ("message", "b", "")]),
    EventStreamCase("CR line ends", "data: a\r\rdata: b\r\r", [("message", "a", ""), ("message", "b", "")]),
    EventStreamCase("mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", [("message", "a\nb\nc", "")]),
    EventStreamCase(
        "a byte order mark at the start", [0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8), [("message", "x", "")]),
    EventStreamCase(
        "a second byte order mark is part of the field name",
        [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8),
        []),
    EventStreamCase("comments are ignored", ": heartbeat\n:\ndata: a\n\n", [("message", "a", "")]),
    EventStreamCase("a comment inside an event", "data: a\n: note\ndata: b\n\n", [("message", "a\nb", "")]),
    EventStreamCase("multi-line data", "data: one\ndata: two\ndata: three\n\n", [("message", "one\ntwo\nthree", "")]),
    EventStreamCase("empty data line", "data\n\n", [("message", "", "")]),
    EventStreamCase("two empty data lines", "data\ndata\n\n", [("message", "\n", "")]),
    EventStreamCase("data with a colon and no space", "data:x\n\n", [("message", "x", "")]),
    EventStreamCase("only one leading space is dropped", "data:  two spaces\n\n", [("message", " two spaces", "")]),
    EventStreamCase("a trailing space is kept", "data: a \n\n", [("message", "a ", "")]),
    EventStreamCase("colons in the value", "data: a: b: c\n\n", [("message", "a: b: c", "")]),
    EventStreamCase("event type", "event: add\ndata: 1\n\n", [("add", "1", "")]),
    EventStreamCase(
        "the type resets after dispatch", "event: add\ndata: 1\n\ndata: 2\n\n",
        [("add", "1", ""), ("message", "2", "")]),
    EventStreamCase("an empty type is message", "event\ndata: 1\n\n", [("message", "1", "")]),
    EventStreamCase("an event without data is not dispatched", "event: add\n\ndata: 2\n\n", [("message", "2", "")]),
    EventStreamCase("a type without data does not carry over", "event: add\n\ndata: 2\n\n", [("message", "2", "")]),
    EventStreamCase("id", "id: 7\ndata: a\n\n", [("message", "a", "7")]),
    EventStreamCase(
        "the id stays for later events", "id: 7\ndata: a\n\ndata: b\n\n",
        [("message", "a", "7"), ("message", "b", "7")]),
    EventStreamCase(
        "an empty id resets it", "id: 7\ndata: a\n\nid\ndata: b\n\n", [("message", "a", "7"), ("message", "b", "")]),
    EventStreamCase(
        "an id with NUL is ignored", "id: 7\ndata: a\n\nid: 8\u{0}9\ndata: b\n\n",
        [("message", "a", "7"), ("message", "b", "7")]),
    EventStreamCase("an id alone sets the last ID", "id: 3\n\ndata: a\n\n", [("message", "a", "3")]),
    EventStreamCase("retry", "retry: 2500\ndata: a\n\n", [("message", "a", "")], retry: 2500),
    EventStreamCase("a non-numeric retry is ignored", "retry: 1000\n\nretry: 2s\n\n", [], retry: 1000),
    EventStreamCase("a negative retry is ignored", "retry: -1\n\n", [], retry: nil),
    EventStreamCase("an empty retry is ignored", "retry\n\n", [], retry: nil),
    EventStreamCase("retry with a space inside is ignored", "retry: 1 0\n\n", [], retry: nil),
    EventStreamCase("the last event without a blank line is discarded", "data: a\n\ndata: b\n", [("message", "a", "")]),
    EventStreamCase("a last line without its end is discarded", "data: a\n\ndata: b", [("message", "a", "")]),
    EventStreamCase("a field name without a colon", "data\n\n", [("message", "", "")]),
    EventStreamCase("unknown fields are ignored", "foo: bar\ndata: a\nbaz\n\n", [("message", "a", "")]),
    EventStreamCase("field names are case-sensitive", "Data: a\nDATA: b\ndata: c\n\n", [("message", "c", "")]),
    EventStreamCase("a space before the colon is part of the name", "data : a\ndata: b\n\n", [("message", "b", "")]),
    EventStreamCase("UTF-8 text", "data: héllo → 世界 🎉\n\n", [("message", "héllo → 世界 🎉", "")]),
    EventStreamCase(
        "invalid UTF-8 becomes the replacement character", Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8),
        [("message", "a\u{FFFD}b", "")]),
    EventStreamCase("blank lines alone dispatch nothing", "\n\n\r\n\r\r", []),
    EventStreamCase(
        "JSON data", "data: {\"code\":0,\"data\":{\"t\":\"hi\"}}\n\n",
        [("message", "{\"code\":0,\"data\":{\"t\":\"hi\"}}", "")]),
    EventStreamCase("CR then LF is one line end", "data: a\r\n\r\n", [("message", "a", "")]),
    EventStreamCase(
        "LF then CR is two line ends", "data: a\n\rdata: b\n\n", [("message", "a", ""), ("message", "b", "")]),
    EventStreamCase(
        "a chat answer",
        "event: token\nid: 1\ndata: Hel\n\nevent: token\nid: 2\ndata: lo\n\nevent: done\ndata: [DONE]\n\n",
        [("token", "Hel", "1"), ("token", "lo", "2"), ("done", "[DONE]", "2")]),
    EventStreamCase("id and retry in one event", "id: a\nretry: 10\ndata: x\n\n", [("message", "x", "a")], retry: 10),
    EventStreamCase("an id with spaces inside", "id: a b\ndata: x\n\n", [("message", "x", "a b")]),
    EventStreamCase("a tab is not a space", "data:\tx\n\n", [("message", "\tx", "")]),
]

@Suite struct EventStreamParserTests {
    @Test("the corpus has at least 40 cases")
    func corpusSize() {
        #expect(eventStreamCorpus.count >= 40)
    }

    @Test(
        "each case gives its events whole, cut at every byte, byte by byte, and cut at random",
        arguments: eventStreamCorpus)
    func everySplit(_ sample: EventStreamCase) async {
        // Thousands of parses: on a thread of its own, not the one every test's tasks share.
        let failures = await offThePool { sample.splitFailures() }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
    }

    @Test("an event past the data limit fails the stream, whether it comes in one line or many")
    func eventLimit() {
        var parser = EventStreamParser(maximumLineLength: 1 << 20, maximumEventSize: 100)
        #expect(throws: NetworkError.self) {
            for _ in 0..<20 { _ = try parser.parse(Data("data: 0123456789\n".utf8)) }
        }
        var single = EventStreamParser(maximumLineLength: 1 << 20, maximumEventSize: 100)
        let error = #expect(throws: NetworkError.self) {
            _ = try single.parse(Data(("data: " + String(repeating: "x", count: 200) + "\n").utf8))
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("a line past the limit fails the stream even before it ends, so memory stays bounded")
    func lineLimit() {
        var parser = EventStreamParser(maximumLineLength: 1000, maximumEventSize: 1000)
        let error = #expect(throws: NetworkError.self) {
            for _ in 0..<100 { _ = try parser.parse(Data(repeating: UInt8(ascii: "x"), count: 100)) }
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("a field name or an id past its small bound fails the stream")
    func fieldAndIDLimits() {
        var names = EventStreamParser()
        let long = String(repeating: "n", count: EventStreamParser.maximumFieldNameLength + 1)
        #expect(throws: NetworkError.self) { _ = try names.parse(Data("\(long): x\n".utf8)) }
        var ids = EventStreamParser()
        let id = String(repeating: "7", count: EventStreamParser.maximumIDLength + 1)
        #expect(throws: NetworkError.self) { _ = try ids.parse(Data("id: \(id)\n".utf8)) }
        var fine = EventStreamParser()
        let allowed = String(repeating: "7", count: EventStreamParser.maximumIDLength)
        #expect(throws: Never.self) { _ = try fine.parse(Data("id: \(allowed)\ndata: a\n\n".utf8)) }
    }

    @Test("a parser for the next connection keeps the last ID and retry, and drops a half-read event")
    func continued() throws {
        var parser = EventStreamParser()
        _ = try parser.parse(Data("retry: 40\nid: 9\ndata: a\n\ndata: half".utf8))
        var next = parser.continued(after: parser.lastEventID)
        #expect(next.lastEventID == "9")
        #expect(next.retry == 40)
        let events = try next.parse(Data("data: b\n\n".utf8))
        #expect(events == [EventStreamParser.Event(type: "message", data: "b", id: "9")])
    }

    @Test("an event that sets its own ID says so; one that keeps an earlier ID does not")
    func setsID() throws {
        var parser = EventStreamParser()
        let events = try parser.parse(Data("id: 1\ndata: a\n\ndata: b\n\n".utf8))
        #expect(events.map(\.setsID) == [true, false])
    }
}
