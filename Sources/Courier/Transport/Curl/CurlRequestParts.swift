#if os(Linux)
    import CCurl
    import Foundation

    /// What libcurl reads a request's method, header fields and body from, set on an easy handle
    /// for one transfer and kept until it ends (libcurl reads them as it sends): the header
    /// list, a body in memory copied where it stays put, or the file a body streams from.
    /// ``release()`` frees them once the transfer is over.
    struct CurlRequestParts {
        private var headerList: OpaquePointer?
        private var requestBytes: UnsafeMutableRawBufferPointer?
        /// The file a body streams from, or -1; read by the transfer's read callback.
        private(set) var uploadDescriptor: Int32 = -1

        /// Sets the method, and the body when there is one. What it has made is kept even when
        /// it throws, for ``release()``.
        /// - Throws: ``NetworkError/Code/fileSystem`` when the upload file cannot be opened,
        ///   ``NetworkError/Code/transport`` when libcurl refuses an option.
        mutating func setMethodAndBody(_ method: HTTPMethod, _ body: PreparedBody, with options: CurlOptions)
            throws(NetworkError)
        {
            switch body.content {
            case .none:
                switch method {
                case .get: try options.set(Int32(COURIER_CURLOPT_HTTPGET), 1)
                case .head: try options.set(Int32(COURIER_CURLOPT_NOBODY), 1)
                case .post:
                    try options.set(Int32(COURIER_CURLOPT_POST), 1)
                    try options.set(Int32(COURIER_CURLOPT_POSTFIELDSIZE_LARGE), offset: 0)
                default: try options.set(Int32(COURIER_CURLOPT_CUSTOMREQUEST), method.rawValue)
                }
            case .data(let data):
                let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 1)
                data.copyBytes(to: bytes)
                requestBytes = bytes
                try options.set(Int32(COURIER_CURLOPT_POSTFIELDSIZE_LARGE), offset: Int64(data.count))
                try options.set(Int32(COURIER_CURLOPT_POSTFIELDS), pointer: bytes.baseAddress)
                if method != .post { try options.set(Int32(COURIER_CURLOPT_CUSTOMREQUEST), method.rawValue) }
            case .file(let url, let length):
                uploadDescriptor = open(url.path, O_RDONLY | O_CLOEXEC)
                guard uploadDescriptor >= 0 else {
                    throw NetworkError(.fileSystem, "The upload file \(url.lastPathComponent) cannot be opened.")
                }
                try options.set(Int32(COURIER_CURLOPT_UPLOAD), 1)
                try options.set(Int32(COURIER_CURLOPT_INFILESIZE_LARGE), offset: length)
                try options.set(Int32(COURIER_CURLOPT_CUSTOMREQUEST), method.rawValue)
            }
        }

        /// Sets the header fields, with ``defaultFields`` the request does not set itself.
        /// - Throws: ``NetworkError/Code/transport`` when libcurl cannot store them.
        mutating func setHeaders(_ fields: HTTPHeaders, with options: CurlOptions) throws(NetworkError) {
            // libcurl drops `Name: ` with no value; `Name;` is how it sends an empty one.
            var lines = fields.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
            // What URLSession adds unless the request says otherwise.
            for (name, value) in Self.defaultFields where fields[name] == nil { lines.append("\(name): \(value)") }
            // No `Expect: 100-continue` round trip, and no form type libcurl would add to a POST.
            lines.append("Expect:")
            if fields["Content-Type"] == nil { lines.append("Content-Type:") }
            for line in lines {
                // On failure libcurl returns NULL and leaves the list as it was (freed by `release`).
                guard let list = courier_curl_slist_append(headerList, line) else {
                    throw NetworkError(.transport, "libcurl could not store the request's header fields.")
                }
                headerList = list
            }
            try options.set(Int32(COURIER_CURLOPT_HTTPHEADER), pointer: UnsafeRawPointer(headerList))
        }

        /// `User-Agent` (`process Courier libcurl/7.88.1`) and `Accept-Language` (the
        /// locale's language), as URLSession sends them.
        static let defaultFields: [(String, String)] = {
            let library = String(cString: courier_curl_version()).split(separator: " ").first.map(String.init)
            // The process name is whatever started it: only token characters go in a field.
            let name = ProcessInfo.processInfo.processName
            let process = String(name.unicodeScalars.filter { $0.isASCII && HTTPMethod.isToken(String($0)) })
            var fields = [("User-Agent", "\(process.isEmpty ? "app" : process) Courier \(library ?? "libcurl")")]
            if let language = Locale.current.language.languageCode?.identifier {
                fields.append(("Accept-Language", language))
            }
            return fields
        }()

        /// Frees the parts, once libcurl no longer reads them (the handle is out of libcurl).
        func release() {
            if let headerList { courier_curl_slist_free_all(headerList) }
            requestBytes?.deallocate()
            if uploadDescriptor >= 0 { close(uploadDescriptor) }
        }
    }
#endif
