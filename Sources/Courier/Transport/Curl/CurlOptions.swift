#if os(Linux)
    import CCurl
    import Foundation

    /// Sets the options of one libcurl easy handle, failing closed: an option libcurl refuses
    /// stops the request before anything is sent. Shared by HTTP transfers and WebSocket
    /// connections, so both reach the same hosts the same way (protocols, TLS, pins).
    struct CurlOptions {
        let easy: OpaquePointer
        /// Failures tests inject.
        let faults: CurlFaults

        /// Sets an option through `apply`, or returns the result code a test injected.
        func code(_ option: Int32, _ apply: (OpaquePointer) -> Int32) -> Int32 {
            faults.refusedOptions[option] ?? apply(easy)
        }

        func set(_ option: Int32, _ value: Int) throws(NetworkError) {
            try check(option, code(option) { courier_curl_setopt_long($0, option, value) })
        }

        func set(_ option: Int32, _ text: String) throws(NetworkError) {
            try check(option, setText(option, text))
        }

        func setText(_ option: Int32, _ text: String) -> Int32 {
            code(option) { easy in text.withCString { courier_curl_setopt_pointer(easy, option, $0) } }
        }

        func set(_ option: Int32, pointer: UnsafeRawPointer?) throws(NetworkError) {
            try check(option, code(option) { courier_curl_setopt_pointer($0, option, pointer) })
        }

        func set(_ option: Int32, offset: Int64) throws(NetworkError) {
            try check(option, code(option) { courier_curl_setopt_offset($0, option, offset) })
        }

        /// A request libcurl would send other than asked must not go out at all.
        func check(_ option: Int32, _ code: Int32) throws(NetworkError) {
            guard code != Int32(COURIER_CURLE_OK) else { return }
            throw NetworkError(
                .transport, "libcurl refused option \(option) (\(Self.describe(code))); nothing was sent.")
        }

        static func describe(_ code: Int32) -> String {
            "libcurl \(code): \(String(cString: courier_curl_easy_strerror(code)))"
        }

        /// http and https only, on every hop libcurl might take. `PROTOCOLS_STR` needs libcurl
        /// 7.85; older ones (Ubuntu 22.04 ships 7.81) know only the bit mask.
        func configureProtocols() throws(NetworkError) {
            let code = setText(Int32(COURIER_CURLOPT_PROTOCOLS_STR), "http,https")
            if code == Int32(COURIER_CURLE_UNKNOWN_OPTION) {
                try set(Int32(COURIER_CURLOPT_PROTOCOLS), Int(COURIER_CURLPROTO_HTTP | COURIER_CURLPROTO_HTTPS))
            } else {
                try check(Int32(COURIER_CURLOPT_PROTOCOLS_STR), code)
            }
        }

        /// Certificate authorities and the host's pins, failing closed: a libcurl that cannot pin
        /// (some TLS backends cannot) must not connect as if it had. Each redirect hop is a
        /// transfer of its own, so each host gets its own pins.
        func configureTLS(_ tls: TLSOptions, for url: URL) throws(NetworkError) {
            if let authorities = tls.certificateAuthorities {
                let code = setText(Int32(COURIER_CURLOPT_CAINFO), authorities.path)
                guard code == Int32(COURIER_CURLE_OK) else {
                    throw NetworkError(
                        .tls,
                        "libcurl cannot use the certificate authorities (\(Self.describe(code))); nothing was sent.")
                }
            }
            let pins = try tls.pins(for: url.host ?? "")
            if !pins.isEmpty {
                let pins = pins.map { "sha256//" + $0 }.joined(separator: ";")
                let code = setText(Int32(COURIER_CURLOPT_PINNEDPUBLICKEY), pins)
                guard code == Int32(COURIER_CURLE_OK) else {
                    throw NetworkError(
                        .tls, "This libcurl cannot check public-key pins (\(Self.describe(code))); nothing was sent.")
                }
            }
        }
    }
#endif
