import Foundation

extension HTTPRequest {
    /// A `curl` command that sends this request, for debugging, with every secret redacted the
    /// way logs redact them: token, signature, `Authorization`, `Cookie` and password values in
    /// the URL, headers, form and JSON bodies and multipart fields, and any of `secretKeys`.
    ///
    /// ```text
    /// curl -X POST -H 'token: <redacted>' -H 'Content-Type: application/x-www-form-urlencoded' \
    ///   --data-binary 'title=Tea&sign=<redacted>' 'https://api.example.com/v1/orders'
    /// ```
    ///
    /// Every argument is quoted for a POSIX shell. A body that is not UTF-8 text is shown by its
    /// size, a body streamed from a file by its path, and a multipart file held in memory by its
    /// filename, so the command is a faithful picture of the request but may need those bytes
    /// to run. A redacted secret has to be put back by hand.
    /// - Parameter secretKeys: More parameter, header and JSON key names to redact.
    /// - Returns: The command, on one line.
    public func curlCommand(secretKeys: Set<String> = []) -> String {
        let extra = Set(secretKeys.map { $0.lowercased() })
        var arguments = ["curl"]
        if method == .head {
            arguments.append("--head")
        } else if method != .get || body != .none {
            arguments += ["-X", Self.shellQuoted(method.rawValue)]
        }
        var headers = wireHeaders
        // curl writes a multipart body's Content-Type itself, with the boundary it picks.
        if case .multipart = body { headers["Content-Type"] = nil }
        for field in headers.fields {
            let value = Redaction.isSecret(field.name, extra: extra) ? Redaction.placeholder : field.value
            arguments += ["-H", Self.shellQuoted("\(field.name): \(value)")]
        }
        arguments += bodyArguments(extra: extra)
        arguments.append(Self.shellQuoted(redactedURL(extra: extra)))
        return arguments.joined(separator: " ")
    }

    private func bodyArguments(extra: Set<String>) -> [String] {
        switch body {
        case .none:
            return []
        case .form, .json, .data:
            guard let bytes = body.encoded, !bytes.isEmpty else { return [] }
            guard let text = String(data: bytes, encoding: .utf8) else {
                return ["--data-binary", Self.shellQuoted("<\(bytes.count) bytes that are not text>")]
            }
            return ["--data-binary", Self.shellQuoted(Redaction.redactText(text, extra: extra))]
        case .file(let url, _):
            return ["--data-binary", Self.shellQuoted("@" + url.path)]
        case .multipart(let form):
            var arguments: [String] = []
            for field in form.fields.items {
                let value = Redaction.isSecret(field.name, extra: extra) ? Redaction.placeholder : field.value
                arguments += ["--form-string", Self.shellQuoted("\(field.name)=\(value)")]
            }
            for file in form.files {
                let path: String
                switch file.source {
                case .file(let url): path = url.path
                case .data: path = file.filename
                }
                let escapedPath = path.replacingOccurrences(of: "\"", with: "\\\"")
                let filename = file.filename.replacingOccurrences(of: "\"", with: "\\\"")
                let part = "\(file.name)=@\"\(escapedPath)\";filename=\"\(filename)\";type=\(file.contentType)"
                arguments += ["-F", Self.shellQuoted(part)]
            }
            return arguments
        }
    }

    /// `text` in single quotes for a POSIX shell, each `'` in it written as `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
