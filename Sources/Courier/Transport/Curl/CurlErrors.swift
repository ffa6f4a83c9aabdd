#if os(Linux)
    import CCurl
    import Foundation

    /// libcurl's result codes as ``NetworkError`` values, with libcurl's own detail text.
    enum CurlErrors {
        /// The error for a failed transfer.
        /// - Parameters:
        ///   - code: The `CURLcode`.
        ///   - detail: libcurl's error buffer (may be empty).
        ///   - deadline: The request's deadline, for a timeout's message.
        static func error(for code: Int32, detail: String, deadline: Duration) -> NetworkError {
            let (kind, message) = describe(code, deadline: deadline)
            let text = String(cString: courier_curl_easy_strerror(code))
            let suffix = detail.isEmpty ? text : detail
            return NetworkError(kind, "\(message) (libcurl \(code): \(suffix))")
        }

        private static func describe(_ code: Int32, deadline: Duration) -> (NetworkError.Code, String) {
            switch Int(code) {
            case Int(COURIER_CURLE_OPERATION_TIMEDOUT): (.timedOut, "No complete answer within \(deadline).")
            case Int(COURIER_CURLE_COULDNT_RESOLVE_HOST): (.transport, "The host name could not be resolved.")
            case Int(COURIER_CURLE_COULDNT_CONNECT): (.transport, "The server refused the connection.")
            case Int(COURIER_CURLE_PARTIAL_FILE), Int(COURIER_CURLE_RECV_ERROR), Int(COURIER_CURLE_SEND_ERROR),
                Int(COURIER_CURLE_GOT_NOTHING):
                (.transport, "The connection was lost.")
            // Courier hands libcurl only http and https URLs, so "unsupported protocol" is an
            // answer libcurl cannot read (HTTP/0.9, a four-digit status, an unknown version).
            case Int(COURIER_CURLE_WEIRD_SERVER_REPLY), Int(COURIER_CURLE_HTTP2), Int(COURIER_CURLE_HTTP2_STREAM),
                Int(COURIER_CURLE_UNSUPPORTED_PROTOCOL):
                (.transport, "The server's answer is not valid HTTP.")
            case Int(COURIER_CURLE_BAD_CONTENT_ENCODING):
                (.transport, "The answer's compressed body is not valid.")
            // libcurl refuses a header line over 100 KB as "out of memory".
            case Int(COURIER_CURLE_OUT_OF_MEMORY):
                (.responseTooLarge, "A header line of the answer is too long, or libcurl ran out of memory.")
            case Int(COURIER_CURLE_SSL_CONNECT_ERROR), Int(COURIER_CURLE_PEER_FAILED_VERIFICATION),
                Int(COURIER_CURLE_SSL_ISSUER_ERROR), Int(COURIER_CURLE_SSL_CERTPROBLEM):
                (.tls, "The server's certificate is not trusted or the TLS handshake failed.")
            case Int(COURIER_CURLE_SSL_PINNEDPUBKEYNOTMATCH): (.tls, "The server's public key matches no pin.")
            case Int(COURIER_CURLE_SSL_CACERT_BADFILE): (.tls, "The certificate authority file cannot be read.")
            case Int(COURIER_CURLE_URL_MALFORMAT):
                (.invalidRequest, "The URL is not supported.")
            case Int(COURIER_CURLE_READ_ERROR): (.fileSystem, "The upload file could not be read.")
            // Courier's own callbacks record why they stop a transfer; a write error without
            // one is libcurl's decoder refusing bytes after the end of a compressed body.
            case Int(COURIER_CURLE_WRITE_ERROR):
                (.transport, "The answer's compressed body is not valid.")
            case Int(COURIER_CURLE_ABORTED_BY_CALLBACK):
                (.transport, "The transfer was stopped.")
            default: (.transport, "The transfer failed.")
            }
        }
    }
#endif
