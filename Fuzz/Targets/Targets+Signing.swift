import Courier
import Foundation

extension FuzzTarget {
    static let signingTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "canonical",
            summary:
                "a canonical request's sorted lists and text are what a plain sort of the encoded pairs gives, "
                + "and a prepared HMAC key gives the reference HMAC",
            check: canonical)
    ]

    /// The first byte says which pairs go in the form (one bit each, the lowest first) and
    /// whether the request is a `POST`; the pieces after it are names and values in turn, and a
    /// last piece without a partner is a query as a server writes one (its pairs may keep the
    /// text they were written with); the whole input is also a message for the HMAC, under the
    /// first piece as the key.
    private static func canonical(_ input: UnsafeRawBufferPointer) {
        guard let settings = input.first else { return }
        let pieces = texts(UnsafeRawBufferPointer(rebasing: input.dropFirst()))
        var query = Parameters()
        var form = Parameters()
        for index in stride(from: 0, to: pieces.count - 1, by: 2) {
            let inForm = index / 2 < 7 && settings >> (index / 2) & 1 == 1
            if inForm {
                form.append(name: pieces[index], value: pieces[index + 1])
            } else {
                query.append(name: pieces[index], value: pieces[index + 1])
            }
        }
        if pieces.count % 2 == 1, let written = pieces.last {
            query.append(contentsOf: Parameters.decoding(Substring(written)))
        }
        let isPost = settings & 0x80 != 0
        let request = HTTPRequest(
            method: isPost ? .post : .get, url: URL(string: "https://API.example.com:8443/v1/orders")!, query: query,
            body: isPost ? .form(form) : .none)
        let canonical = CanonicalRequest(request, version: .v2, excluding: "sign", timestamp: "1", nonce: "n")
        let sent = isPost ? form : Parameters()
        require(canonical.sortedQuery == sortedReference(query), "query \(query)")
        require(canonical.sortedForm == sortedReference(sent), "form \(sent)")
        require(canonical.sortedParameters == sortedReference(query + sent), "both \(query) \(sent)")
        let lines = [
            "COURIER-V2", isPost ? "POST" : "GET", "api.example.com:8443", "/v1/orders", canonical.sortedQuery,
            canonical.sortedForm, canonical.bodyHash, "1", "n",
        ]
        require(canonical.string == lines.joined(separator: "\n"), "text of \(query) \(sent)")

        let key = Data((pieces.first ?? "").utf8)
        let prepared = Hashing.hmacSHA256(key: key)
        let code = prepared.code(for: input)
        require(code == HMAC<SHA256>.authenticationCode(for: input, key: key), "HMAC under a \(key.count)-byte key")
    }

    /// Each `name=value` pair but `sign` encoded, sorted by its bytes and joined with `&`: the
    /// slow, plain way.
    private static func sortedReference(_ parameters: Parameters) -> String {
        let pairs = parameters.items.filter { $0.name != "sign" }.map { Array(Parameters([$0]).encoded.utf8) }
        let sorted = pairs.sorted { $0.lexicographicallyPrecedes($1) }
        return sorted.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "&")
    }
}

extension Parameters {
    fileprivate static func + (lhs: Parameters, rhs: Parameters) -> Parameters {
        Parameters(lhs.items + rhs.items)
    }
}
