import Foundation

/// What an answer's headers say about reusing it (RFC 9111, as a private cache reads them): how
/// long it stays fresh, how to ask the server whether it still holds, and how a `304 Not
/// Modified` updates it.
package enum HTTPFreshness {
    /// One Cache-Control directive: its lower-case name, and its value without quotes, if any.
    package struct Directive: Equatable {
        package let name: String
        package let value: String?
    }

    /// The directives of every Cache-Control field, in order. A comma inside a quoted value
    /// (`no-cache="Set-Cookie, Age"`) does not end the directive.
    package static func directives(in headers: HTTPHeaders) -> [Directive] {
        headers.fields.filter { $0.name.caseInsensitiveEquals("Cache-Control") }
            .flatMap { HTTPHeaders.parts(of: $0.value, separatedBy: ",") }
            .map(HTTPHeaders.parameter).filter { !$0.name.isEmpty }
            .map { Directive(name: $0.name, value: $0.value) }
    }

    /// How long an answer stays fresh after it was stored, in seconds: its `max-age`, or else
    /// `Expires` less `Date` (or less when it was stored, without a `Date`), less the `Age` it
    /// already had. Zero, so it is revalidated before every use, for `no-cache`, for a `max-age`
    /// or `Expires` that cannot be read, and for an answer that names no lifetime at all.
    package static func lifetime(of entry: CachedResponse) -> TimeInterval {
        var maxAge: Int64?
        for directive in directives(in: entry.headers) {
            switch directive.name {
            case "no-cache":
                return 0
            case "max-age":
                guard let seconds = directive.value.flatMap(deltaSeconds) else { return 0 }
                maxAge = min(maxAge ?? seconds, seconds)
            default:
                continue
            }
        }
        let lifetime: TimeInterval
        if let maxAge {
            lifetime = TimeInterval(maxAge)
        } else if let expiresText = entry.headers["Expires"] {
            guard let expires = HTTPDate.parse(expiresText) else { return 0 }
            let date = entry.headers["Date"].flatMap { HTTPDate.parse($0) } ?? entry.storedAt
            lifetime = expires.timeIntervalSince(date)
        } else {
            return 0
        }
        let age = entry.headers["Age"].flatMap { deltaSeconds($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let fresh = lifetime - TimeInterval(age)
        return fresh.isFinite ? max(0, fresh) : 0
    }

    /// A number of seconds: digits only; one too large for 31 bits counts as 2³¹ (RFC 9111
    /// §1.2.2). In 64 bits, whatever `Int` is.
    private static func deltaSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let limit: Int64 = 1 << 31
        return text.utf8.count > 10 ? limit : min(Int64(text) ?? limit, limit)
    }

    /// A copy of `request` that asks the server whether `entry` still holds: `If-None-Match`
    /// with its `ETag` as the server wrote it (quoted or not: many backends send `ETag: abc`,
    /// and browsers send it back as it is), `If-Modified-Since` with its `Last-Modified`. `nil`
    /// when the entry has neither (or one that cannot go in a header), the request is not a
    /// `GET` or `HEAD`, or the endpoint asks a condition of its own.
    package static func conditional(_ request: HTTPRequest, revalidating entry: CachedResponse) -> HTTPRequest? {
        guard request.method == .get || request.method == .head, request.headers["If-None-Match"] == nil,
            request.headers["If-Modified-Since"] == nil
        else { return nil }
        var conditional = request
        if let tag = entry.headers["ETag"].map(trimmed), isSendable(tag) {
            conditional.headers["If-None-Match"] = tag
        }
        // Written in the preferred form whatever form it came in, as a sender must.
        if let text = entry.headers["Last-Modified"], let date = HTTPDate.parse(text).flatMap(HTTPDate.format) {
            conditional.headers["If-Modified-Since"] = date
        }
        return conditional.headers == request.headers ? nil : conditional
    }

    /// A validator that can go back in a header as it is: not empty, and no control character
    /// (a CR or LF from a store would add a header). An entity tag as RFC 9110 §8.8.3 writes it
    /// (`"…"`, `W/"…"`) is one; so is the unquoted tag many backends send.
    private static func isSendable(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x20...0x7E).contains($0) || $0 >= 0x80 }
    }

    /// A field value without the spaces and tabs around it.
    private static func trimmed(_ text: String) -> String {
        text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    /// Fields a `304` does not change in the stored answer: those that frame or encode its
    /// body, which the `304` does not carry, and cookies, which are never stored.
    package static let keptFields: Set<String> = HTTPHeaders.transportOwnedNames.union([
        "content-encoding", "content-range", "content-type", "set-cookie",
    ])

    /// `stored` with the fields of a `304 Not Modified` in place of its own (RFC 9111 §4.3.4),
    /// and no `Age` or `Date` but the 304's; `nil` when the `304` names a validator that is not the
    /// stored answer's (another `ETag`, or another `Last-Modified` without an `ETag`), so it
    /// does not speak of it. One that names none answers the condition the request asked.
    package static func refreshed(_ stored: HTTPResponse, with notModified: HTTPResponse) -> HTTPResponse? {
        if let tag = notModified.headers["ETag"] {
            guard let storedTag = stored.headers["ETag"], weakTag(tag) == weakTag(storedTag) else { return nil }
        } else if let modified = notModified.headers["Last-Modified"] {
            guard let storedModified = stored.headers["Last-Modified"],
                HTTPDate.parse(modified).map({ $0 == HTTPDate.parse(storedModified) }) ?? (modified == storedModified)
            else { return nil }
        }
        var headers = stored.headers
        headers["Age"] = nil
        // A 304 without a Date was made now: the stored Date would measure a new Expires from
        // the old answer's time, and keep the entry fresh for longer than the server said.
        if notModified.headers["Date"] == nil { headers["Date"] = nil }
        var replaced: [String] = []
        for field in notModified.headers.fields {
            let name = field.name.lowercased()
            guard !keptFields.contains(name) else { continue }
            if !replaced.contains(name) {
                headers[name] = nil
                replaced.append(name)
            }
            headers.append(name: field.name, value: field.value)
        }
        var refreshed = stored
        refreshed.headers = headers
        return refreshed
    }

    /// An entity tag for the weak comparison: without its `W/`, and trimmed.
    private static func weakTag(_ text: String) -> Substring {
        let trimmed = Substring(text.trimmingCharacters(in: .whitespaces))
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
    }
}
