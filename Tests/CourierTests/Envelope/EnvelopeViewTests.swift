import CourierTesting
import Foundation
import Testing

@testable import Courier

/// What Courier reads of an answer's envelope beside the caller's decoding, read once per answer
/// by the client's decoder.
@Suite struct EnvelopeViewTests {
    /// A decoder that counts the bodies it reads.
    final class CountingDecoder: JSONDecoder, @unchecked Sendable {
        let reads = Locked(0)
        override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
            reads.withLock { $0 += 1 }
            return try super.decode(type, from: data)
        }
    }

    static func decoder(_ format: EnvelopeFormat = .standard, numbersAt keys: Set<String> = []) -> CountingDecoder {
        let decoder = CountingDecoder()
        decoder.userInfo = [.envelopeFormat: format, .envelopeNumberKeys: keys]
        return decoder
    }

    @Test("a business code is an exact integer, a string or nothing")
    func exactCodes() throws {
        let body = Data(
            #"{"a":1e300,"b":1.5,"c":true,"d":99,"e":-7,"f":9223372036854775807,"g":9223372036854775808,"h":"12","i":"A0001"}"#
                .utf8
        )
        let codes = ["a", "b", "c", "d", "e", "f", "g", "h", "i"].map {
            EnvelopeView.read(body, with: Self.decoder(EnvelopeFormat(codeKey: $0))).code
        }
        #expect(codes == [nil, nil, nil, 99, -7, BusinessCode(Int.max), nil, 12, "A0001"])
    }

    @Test("with a success flag, a success has no failing code; without one, the code is it")
    func failureCode() {
        let flagged = Self.decoder(EnvelopeFormat(successKey: "ok"))
        #expect(EnvelopeView.read(Data(#"{"ok":true,"code":99}"#.utf8), with: flagged).failureCode == nil)
        #expect(EnvelopeView.read(Data(#"{"ok":true,"code":99}"#.utf8), with: flagged).code == 99)
        #expect(EnvelopeView.read(Data(#"{"ok":false,"code":99}"#.utf8), with: flagged).failureCode == 99)
        #expect(EnvelopeView.read(Data(#"{"code":99}"#.utf8), with: flagged).failureCode == 99)
        #expect(EnvelopeView.read(Data(#"{"code":0}"#.utf8), with: Self.decoder()).failureCode == 0)
    }

    @Test("an older backend's error fields, the numbers asked for, and nothing from what is not an object")
    func fields() {
        let body = Data(
            #"{"errorCode":"E12","errorDescription":"bad","content":"Try later","meta":{"now":1700000000},"t":true}"#
                .utf8)
        let view = EnvelopeView.read(body, with: Self.decoder(numbersAt: ["meta.now", "t", "missing"]))
        #expect(view.code == nil)
        #expect(view.errorFields?.errorCode == "E12")
        #expect(view.errorFields?.errorDescription == "bad")
        #expect(view.errorFields?.content == "Try later")
        #expect(view.number(at: "meta.now") == 1_700_000_000)
        #expect(view.number(at: "t") == nil)
        #expect(view.numberKeys == ["meta.now", "t", "missing"])
        #expect(EnvelopeView.read(Data(#"{"errorCode":null}"#.utf8), with: Self.decoder()).errorFields == nil)
        for text in ["[1]", "\"s\"", "{", "", "<html>"] {
            let view = EnvelopeView.read(Data(text.utf8), with: Self.decoder())
            #expect(view.code == nil && view.message == nil && view.errorFields == nil)
        }
        let large =
            Data(#"{"code":99,"pad":""#.utf8) + Data(repeating: 0x61, count: EnvelopeView.largestBody)
            + Data(#""}"#.utf8)
        #expect(EnvelopeView.read(large, with: Self.decoder()).code == nil)
    }
}
