import Foundation
import Testing

@testable import Courier

/// The values a request carries through its `async` calls are kept out of line: each is one
/// reference wide, so the frames of a request waiting in flight stay small, and each is still
/// a value, so a changed copy never changes the original.
@Suite struct OutOfLineValuesTests {
    @Test("The request path's values are one reference wide")
    func oneReferenceWide() {
        let word = MemoryLayout<Int>.size
        #expect(MemoryLayout<HTTPRequest>.size == word)
        #expect(MemoryLayout<HTTPResponse>.size == word)
        #expect(MemoryLayout<NetworkError>.size == word)
        #expect(MemoryLayout<Endpoint<Data>>.size == word)
        #expect(MemoryLayout<PreparedBody>.size == word)
        #expect(MemoryLayout<InterceptorContext>.size == word)
    }

    @Test("A changed copy of a request leaves the original as it was")
    func requestCopies() throws {
        let original = HTTPRequest(method: .get, url: try #require(URL(string: "http://127.0.0.1/a")))
        var copy = original
        copy.headers["X-Copy"] = "1"
        copy.method = .post
        copy.timeout = .seconds(5)
        #expect(original.headers["X-Copy"] == nil)
        #expect(original.method == .get)
        #expect(original.timeout == .seconds(30))
        #expect(copy.headers["X-Copy"] == "1")
        #expect(copy.method == .post)
    }

    @Test("A changed copy of a response, an error or an endpoint leaves the original as it was")
    func otherCopies() {
        let response = HTTPResponse(status: 200, body: Data("a".utf8))
        var changedResponse = response
        changedResponse.body.append(contentsOf: Data("b".utf8))
        changedResponse.status = 404
        #expect(response.body == Data("a".utf8) && response.status == 200)
        #expect(changedResponse.body == Data("ab".utf8) && changedResponse.status == 404)

        let error = NetworkError(.transport, "first")
        var changedError = error
        changedError.message = "second"
        changedError.status = 500
        #expect(error.message == "first" && error.status == nil)
        #expect(changedError.message == "second" && changedError.status == 500)

        let endpoint = Endpoint<Data>.get("a", decoding: .data)
        let changedEndpoint = endpoint.idempotent().sharingIdenticalRequests(false).maximumResponseBodySize(10)
        #expect(endpoint.sharesIdenticalRequests && endpoint.maximumResponseBodySize == nil)
        #expect(!changedEndpoint.sharesIdenticalRequests && changedEndpoint.maximumResponseBodySize == 10)
    }

    @Test("print shows the stored properties, not the box they are kept in")
    func printedFields() throws {
        let response = String(describing: HTTPResponse(status: 204))
        #expect(response.hasPrefix("HTTPResponse(status: 204"), "\(response)")
        let request = String(
            describing: HTTPRequest(method: .get, url: try #require(URL(string: "http://127.0.0.1/a"))))
        #expect(request.contains("url: http://127.0.0.1/a"), "\(request)")
        #expect(!request.contains("CopyOnWrite") && !response.contains("CopyOnWrite"))
        let endpoint = String(describing: Endpoint<Data>.get("a", decoding: .data))
        #expect(endpoint.contains("checksContentType: false"), "\(endpoint)")
        #expect(!endpoint.contains("CopyOnWrite"), "\(endpoint)")
    }
}
