import Foundation
import Testing

@testable import Courier

/// Parameters added to a JSON body change only the members they name; every other byte is the
/// caller's.
@Suite struct JSONObjectTextTests {
    static func adding(_ parameters: Parameters, _ merge: HTTPRequest.ParameterMerge, to json: String) throws -> String
    {
        var request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1/")!)
        request.body = .json(Data(json.utf8))
        try request.addParametersIncludingJSON(parameters, merge: merge)
        guard case .json(let data) = request.body else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    @Test("members are replaced or appended in place; numbers, spacing, nesting and order stay as written")
    func inPlace() throws {
        let written =
            #"{ "z": 18446744073709551615, "a": 0.1000000000000000055, "n": {"token": "x", "l": [1, {"}": "]"}]},"#
            + #" "token": null , "s": "a\"b" }"#
        let replaced = try Self.adding(["token": "t\"1", "version": "3/2"], .replaceExisting, to: written)
        #expect(
            replaced
                == #"{ "z": 18446744073709551615, "a": 0.1000000000000000055, "n": {"token": "x", "l": [1, {"}": "]"}]},"#
                + #" "token": "t\"1" , "s": "a\"b" ,"version":"3/2"}"#)
        let kept = try Self.adding(["token": "t", "s": "new", "os": "2"], .keepExisting, to: written)
        #expect(kept == String(written.dropLast()) + #","os":"2"}"#)
    }

    @Test("an empty object, escaped names and duplicate members")
    func edges() throws {
        #expect(try Self.adding(["a": "1"], .replaceExisting, to: "{}") == #"{"a":"1"}"#)
        #expect(try Self.adding(["a": "1"], .replaceExisting, to: " { \n } ") == " { \n \"a\":\"1\"} ")
        #expect(try Self.adding(["token": "n"], .replaceExisting, to: #"{"\u0074oken":1}"#) == #"{"\u0074oken":"n"}"#)
        #expect(try Self.adding(["a": "n"], .replaceExisting, to: #"{"a":1,"a":[2]}"#) == #"{"a":"n","a":"n"}"#)
    }

    @Test("a body that is not a JSON object is refused", arguments: ["[1]", "\"s\"", "{", "{\"a\":}", ""])
    func notAnObject(_ json: String) {
        #expect(throws: NetworkError.self) { try Self.adding(["a": "1"], .replaceExisting, to: json) }
    }
}
