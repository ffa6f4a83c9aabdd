import Foundation

extension HTTPRequest {
    /// A `curl` command that sends this request, for debugging, with every secret redacted the
    /// way logs redact them (see ``Redactor``): token, signature, `Authorization`, `Cookie` and
    /// password values in the URL's query and user information, headers, form and JSON bodies
    /// and multipart fields. A secret that is a whole path segment (`/reset/<token>`) is not
    /// recognised.
    ///
    /// ```text
    /// curl --globoff -X 'POST' -H 'token: <redacted>' \
    ///   -H 'Content-Type: application/x-www-form-urlencoded' \
    ///   --data-raw 'title=Tea&sign=<redacted>' 'https://api.example.com/v1/orders'
    /// ```
    ///
    /// Every argument is quoted for a POSIX shell, and curl reads no local file but those this
    /// request itself streams from disk (a file body, multipart files from disk). A body that
    /// is not UTF-8 text, or larger than `bodyLimit`, is shown by its size; a multipart file
    /// held in memory is shown as a path under `/dev/null`, which curl cannot open; a field
    /// name's characters that curl's `-F` syntax reads specially (`"`, `\`, `;`, `,`, `=`) are
    /// shown as `_`, and a part's media type with such characters is left out. So the command
    /// is a faithful picture of the request but may need those bytes to run, and a redacted
    /// secret has to be put back by hand. A `HEAD` with a body is shown with `-X 'HEAD'`,
    /// which makes curl wait for a body that never comes.
    /// - Parameters:
    ///   - redactor: What to hide.
    ///   - bodyLimit: The largest body shown as text, in bytes; `nil` for no limit.
    /// - Returns: The command.
    public func curlCommand(redactor: Redactor = .standard, bodyLimit: Int? = nil) -> String {
        var arguments = ["curl", "--globoff"]
        if method == .head, body == .none {
            arguments.append("--head")
        } else if method != .get || body != .none {
            arguments += ["-X", Self.shellQuoted(method.rawValue)]
        }
        var headers = wireHeaders
        // curl writes a multipart body's Content-Type itself, with the boundary it picks.
        if case .multipart = body { headers["Content-Type"] = nil }
        for field in redactor.redact(headers: headers).fields {
            let value = field.value
            // `-H 'Name:'` would remove the header; `-H 'Name;'` sends it empty.
            arguments += ["-H", Self.shellQuoted(value.isEmpty ? "\(field.name);" : "\(field.name): \(value)")]
        }
        arguments += bodyArguments(redactor: redactor, contentType: headers["Content-Type"], limit: bodyLimit)
        arguments.append(Self.shellQuoted(redactedURL(redactor: redactor)))
        return arguments.joined(separator: " ")
    }

    private func bodyArguments(redactor: Redactor, contentType: String?, limit: Int?) -> [String] {
        switch body {
        case .none:
            return []
        case .form(let parameters):
            let form = Data(parameters.encoded.utf8)
            return textBody(form, redactor: redactor, contentType: "application/x-www-form-urlencoded", limit: limit)
        case .json(let bytes), .data(let bytes, _):
            return textBody(bytes, redactor: redactor, contentType: contentType, limit: limit)
        case .file(let url, _):
            return ["--data-binary", Self.shellQuoted("@" + url.path)]
        case .multipart(let form):
            var arguments: [String] = []
            for field in form.fields.items {
                let value = redactor.redact(field: field.name, value: field.value)
                arguments += ["--form-string", Self.shellQuoted("\(field.name)=\(value)")]
            }
            for file in form.files {
                let path: String
                switch file.source {
                case .file(let url): path = url.path
                // Under /dev/null, which is no folder, so curl can never open it.
                case .data: path = "/dev/null/memory:" + file.filename
                }
                var part = "\(Self.formSafe(file.name))=@\"\(Self.formQuoted(path))\""
                part += ";filename=\"\(Self.formQuoted(file.filename))\""
                // A type with characters curl's syntax reads is left to curl to guess.
                if file.contentType.unicodeScalars.allSatisfy({ Self.plainTypeScalars.contains($0) }) {
                    part += ";type=\(file.contentType)"
                }
                arguments += ["-F", Self.shellQuoted(part)]
            }
            return arguments
        }
    }

    /// `--data-raw` (which, unlike `--data-binary`, never reads a file for a leading `@`) with
    /// the redacted text, or the body's size when it is not text or is over the limit.
    private func textBody(_ bytes: Data, redactor: Redactor, contentType: String?, limit: Int?) -> [String] {
        guard !bytes.isEmpty else { return [] }
        guard limit.map({ bytes.count <= $0 }) ?? true, String(data: bytes, encoding: .utf8) != nil else {
            return ["--data-raw", Self.shellQuoted("<\(bytes.count) bytes not shown>")]
        }
        return ["--data-raw", Self.shellQuoted(redactor.redact(body: bytes, contentType: contentType))]
    }

    /// The characters of a media type that curl's `-F` syntax takes as they are.
    private static let plainTypeScalars = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&^_.+-/".unicodeScalars)

    /// `text` inside one of curl's `-F` quoted words: `"` and `\` escaped, control characters
    /// shown as `_`.
    private static func formQuoted(_ text: String) -> String {
        var quoted = ""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar.properties.generalCategory == .control ? "_" : scalar)
        }
        return quoted
    }

    /// `text` (a field name, outside quotes) with every character that curl's `-F` syntax reads
    /// specially, and every control character, shown as `_`.
    private static func formSafe(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    "\"\\;,=".unicodeScalars.contains(scalar) || scalar.properties.generalCategory == .control
                        ? "_" : scalar
                }))
    }

    /// `text` in single quotes for a POSIX shell, each `'` in it written as `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
