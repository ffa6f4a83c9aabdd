import Courier
import Testing

@Suite struct HTTPHeadersTests {
    @Test("lookup ignores case; setting replaces every field of that name; add keeps them")
    func semantics() {
        var headers: HTTPHeaders = ["Accept": "application/json", "X-Tag": "a"]
        headers.append(name: "x-tag", value: "b")
        #expect(headers["ACCEPT"] == "application/json")
        #expect(headers.fields.filter { $0.name.lowercased() == "x-tag" }.map(\.value) == ["a", "b"])
        headers["X-TAG"] = "c"
        #expect(headers.fields.map(\.value) == ["application/json", "c"])
        headers["x-tag"] = nil
        #expect(headers["X-Tag"] == nil)
        headers.merge(["Accept": "text/plain", "token": "t"])
        #expect(headers.fields.map { "\($0.name): \($0.value)" } == ["Accept: text/plain", "token: t"])
    }

    @Test("methods know whether they are idempotent")
    func idempotence() {
        let idempotent: [HTTPMethod] = [.get, .head, .put, .delete, .options]
        let unsafe: [HTTPMethod] = [.post, .patch, "PROPFIND"]
        #expect(idempotent.allSatisfy { $0.isIdempotent })
        #expect(unsafe.allSatisfy { !$0.isIdempotent })
    }
}
