import Testing

@testable import Courier

/// The `Link` header reader (RFC 8288) that ``Paging/linkHeader`` uses.
@Suite struct LinkHeaderTests {
    static func next(_ fields: String...) -> String? { LinkHeader.target(ofRelation: "next", in: fields) }

    @Test("the link whose rel is next, among others, quoted or not")
    func findsNext() {
        #expect(
            Self.next(#"<https://a.example/p?page=1>; rel="prev", <https://a.example/p?page=3>; rel="next""#)
                == "https://a.example/p?page=3")
        #expect(Self.next("</items?page=2>;rel=next") == "/items?page=2")
        #expect(Self.next(#"<https://a.example/x>; rel="first", <https://a.example/y>; rel="last""#) == nil)
        #expect(Self.next("") == nil)
    }

    @Test("rel may list several types, in any case, and only the first rel counts")
    func relList() {
        #expect(Self.next(#"<a>; rel="last NEXT""#) == "a")
        #expect(Self.next(#"<a>; rel="nextpage""#) == nil)
        #expect(Self.next(#"<a>; rel="prev"; rel="next", <b>; rel=next"#) == "b")
    }

    @Test("commas and semicolons in a URL or a quoted value do not split the link")
    func separatorsInside() {
        #expect(
            Self.next(#"<https://a.example/p?tags=a,b;c>; title="x, y; z"; rel="next""#)
                == "https://a.example/p?tags=a,b;c")
        #expect(Self.next(#"<a>; title="say \"hi\", rel=next", <b>; rel="next""#) == "b")
    }

    @Test("several Link fields are read in order")
    func severalFields() {
        #expect(LinkHeader.target(ofRelation: "next", in: [#"<a>; rel="prev""#, #"<b>; rel="next""#]) == "b")
    }

    @Test("broken fields give no link rather than a wrong one, and never crash")
    func broken() {
        #expect(Self.next(#"<https://a.example/never-closed; rel="next""#) == nil)
        #expect(Self.next(#"junk, <b>; rel="next""#) == "b")
        #expect(Self.next(#"<a>; rel="next"#) == "a", "an unclosed quote runs to the end")
        #expect(Self.next(";;;,,,<<>>;rel") == nil)
        #expect(Self.next(#"<a>; rel"#) == nil)
        #expect(Self.next(#"< b >; rel=next"#) == "b")
    }
}

/// Setting a query parameter by name, as a custom paging does.
@Suite struct ParametersSubscriptTests {
    @Test("setting replaces the first of that name and removes the others; nil removes all; a new name is appended")
    func set() {
        var query: Parameters = ["a": "1", "page": "1", "b": "2", "page": "9"]
        query["page"] = "2"
        #expect(query.encoded == "a=1&page=2&b=2")
        query["size"] = "20"
        #expect(query.encoded == "a=1&page=2&b=2&size=20")
        query["page"] = nil
        #expect(query.encoded == "a=1&b=2&size=20")
        query["missing"] = nil
        #expect(query.count == 3)
    }
}
