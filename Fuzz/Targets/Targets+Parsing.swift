import Courier
import Foundation

extension FuzzTarget {
    static let parsingTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "envelope",
            summary:
                "the token and re-login layers read the code BaseModel reads, in varied formats and decoder settings",
            check: envelope),
        FuzzTarget(
            name: "parameters",
            summary:
                "parameters and percent-encoding round-trip; decoding what was decoded and encoded changes nothing",
            check: parameters),
        FuzzTarget(
            name: "url-join",
            summary: "a relative endpoint path never leaves the base URL's scheme, host, port or user",
            check: urlJoin),
        FuzzTarget(
            name: "http-cache",
            summary:
                "HTTP dates read back as written, lifetimes finite and never negative, and no validator or 304 field that could not go on the wire or that frames a body",
            check: httpCache),
    ]

    /// The first byte picks the envelope format and the decoder's settings; the rest is the body.
    private static func envelope(_ input: UnsafeRawBufferPointer) {
        guard let settings = input.first else { return }
        let body = Data(input.dropFirst())
        let codeKey = (settings & 8 == 0 ? "" : "meta.") + ["code", "result", "err_code", "errCode"][Int(settings & 3)]
        let format = EnvelopeFormat(
            codeKey: codeKey, successCodes: settings & 4 == 0 ? [0] : [0, 200, "A0000"],
            successKey: settings & 64 == 0 ? nil : "success")
        let decoder = JSONDecoder()
        if settings & 16 != 0 { decoder.keyDecodingStrategy = .convertFromSnakeCase }
        if settings & 32 != 0 { decoder.allowsJSON5 = true }
        decoder.userInfo[.envelopeFormat] = format
        let response = HTTPResponse(status: 200, body: body)
        let probed = response.envelope(decoder).failureCode
        // The envelope as the client decodes a body (`.json`, so its code is kept).
        let model = try? ResponseDecoding<BaseModel<EmptyResponse>>.json.decode(
            response, DecodingContext(decoder: decoder, envelope: format))
        let decoded = model?.code ?? nil
        if format.successKey == nil {
            require(
                probed == decoded,
                "the layers read \(String(describing: probed)), BaseModel \(String(describing: decoded))")
        } else if let model {
            // With a flag, a success has no code for the layers; a failure has BaseModel's.
            let expected = model.isSuccess ? nil : decoded
            require(
                probed == expected,
                "the layers read \(String(describing: probed)), BaseModel \(String(describing: decoded))")
        }
        // The view read with an envelope, in the same pass, is the view read on its own.
        let read = response.envelope(decoder)
        let withEnvelope = HTTPResponse(status: 200, body: body)
        ResponseDecoding<EmptyResponse>.envelope.decodeAhead?(withEnvelope, decoder)
        if let view = withEnvelope.envelopeIfRead(decoder) {
            require(
                view.failureCode == read.failureCode && view.code == read.code && view.message == read.message,
                "the view read with the envelope differs from the view read alone")
        }
        if let model, format.successKey == nil {
            require(decoded != nil, "no code without a success flag")
            require(model.isSuccess == decoded.map(format.successCodes.contains), "isSuccess for code \(decoded!)")
        }
    }

    private static func parameters(_ input: UnsafeRawBufferPointer) {
        let pieces = texts(input)
        for piece in pieces {
            let decoded = PercentEncoding.decode(PercentEncoding.encode(piece))
            require(
                decoded == piece, "percent round trip of \(piece.debugDescription) gave \(decoded.debugDescription)")
        }
        var built = Parameters()
        for index in stride(from: 0, to: pieces.count - 1, by: 2) {
            built.append(name: pieces[index], value: pieces[index + 1])
        }
        let parsed = Parameters.decoding(Substring(built.encoded))
        require(parsed == built, "\(built.encoded.debugDescription) decoded to other parameters")
        // Whatever a server or a user wrote: decoding is stable once the text was taken in.
        let text = String(decoding: input, as: UTF8.self)
        let once = Parameters.decoding(Substring(text))
        let twice = Parameters.decoding(Substring(once.encoded))
        require(twice == once, "\(text.debugDescription) decodes differently after \(once.encoded.debugDescription)")
    }

    private static let base = URLJoiner.Base(URL(string: "https://api.example.com:8443/v1/?lang=en")!)

    private static func urlJoin(_ input: UnsafeRawBufferPointer) {
        let path = String(decoding: input, as: UTF8.self)
        guard let (url, _) = try? URLJoiner.join(base: base, path: path) else { return }
        let lowered = path.prefix(8).lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            require(["http", "https"].contains(url.scheme?.lowercased() ?? ""), "\(path.debugDescription) gave \(url)")
            return
        }
        // `url.path` is empty when an escape decodes to bytes that are not UTF-8: compare the text.
        require(
            url.absoluteString.hasPrefix("https://api.example.com:8443/v1") && url.host == "api.example.com"
                && url.port == 8443 && url.user == nil && url.password == nil,
            "the relative path \(path.debugDescription) gave \(url.absoluteString.debugDescription)")
    }

    /// The input cut at NUL bytes: a date, then header values for a stored answer
    /// (Cache-Control, Expires, Date, Age, ETag, Last-Modified) and for a `304` (ETag, then
    /// name and value pairs).
    private static func httpCache(_ input: UnsafeRawBufferPointer) {
        var pieces = texts(input)
        while pieces.count < 8 { pieces.append("") }
        if let date = HTTPDate.parse(pieces[0]) {
            require(date.timeIntervalSince1970 >= 0, "\(pieces[0].debugDescription) is before 1970")
            let written = imfFixdate().string(from: date)
            require(HTTPDate.parse(written) == date, "\(pieces[0].debugDescription) read back as \(written)")
        }
        var stored = HTTPHeaders()
        for (name, value) in zip(["Cache-Control", "Expires", "Date", "Age", "ETag", "Last-Modified"], pieces[1...6])
        where !value.isEmpty {
            stored.append(name: name, value: value)
        }
        let entry = CachedResponse(
            HTTPResponse(status: 200, headers: stored), storedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let lifetime = HTTPFreshness.lifetime(of: entry)
        require(lifetime >= .zero, "a negative lifetime for \(stored)")
        _ = HTTPFreshness.directives(in: stored)
        let request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/news")!)
        if let conditional = HTTPFreshness.conditional(request, revalidating: entry) {
            require(conditional.headers.fields.allSatisfy(HTTPHeaders.isValid), "a validator that cannot be sent")
        }
        var notModified = HTTPHeaders()
        if !pieces[7].isEmpty { notModified.append(name: "ETag", value: pieces[7]) }
        for index in stride(from: 8, to: pieces.count - 1, by: 2) {
            notModified.append(name: pieces[index], value: pieces[index + 1])
        }
        var framing = stored
        framing.append(name: "Content-Length", value: "12")
        framing.append(name: "Content-Type", value: "application/json")
        let framed = HTTPResponse(status: 200, headers: framing)
        if let refreshed = HTTPFreshness.refreshed(framed, with: HTTPResponse(status: 304, headers: notModified)) {
            for name in HTTPFreshness.keptFields {
                require(
                    refreshed.headers.fields.filter { $0.name.lowercased() == name }
                        == framed.headers.fields.filter { $0.name.lowercased() == name },
                    "the 304 changed \(name)")
            }
        }
    }

    /// A formatter of the preferred HTTP date format, to write what is read back by hand.
    private static func imfFixdate() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
