#if os(Linux)
    import CCurl

    /// The sockets of plain-HTTP connections libcurl keeps for reuse, by their ports, so a
    /// request about to go out on one can first check it for bytes nobody asked for: what an
    /// earlier answer sent past its end (a 204 or a `HEAD` answer with a body, a body longer
    /// than its `Content-Length`). libcurl before 8.0 would read them as the next answer.
    /// libcurl tells the ports before a request goes, but the socket only after a transfer.
    /// Bytes that arrive after that check, while the request goes out, cannot be told from its
    /// answer, by this or any client.
    ///
    /// `@unchecked Sendable`: used on the event-loop thread only (libcurl's callbacks).
    final class KeptConnections: @unchecked Sendable {
        private var sockets: [Int: Int32] = [:]
        /// Past this many, entries of long-gone connections are dropped.
        private static let limit = 1024

        private static func key(local: Int, peer: Int) -> Int { local << 16 | peer }

        /// Records the connection `easy` used, once its transfer has ended.
        func record(_ easy: OpaquePointer) {
            var local = 0
            var peer = 0
            let socket = courier_curl_last_socket(easy)
            guard socket >= 0, courier_curl_getinfo_long(easy, Int32(COURIER_CURLINFO_LOCAL_PORT), &local) == 0,
                courier_curl_getinfo_long(easy, Int32(COURIER_CURLINFO_PRIMARY_PORT), &peer) == 0
            else { return }
            if sockets.count >= Self.limit { sockets.removeAll() }
            sockets[Self.key(local: local, peer: peer)] = socket
        }

        /// Whether the connection between these ports is fit to send a request on: `false`
        /// when it holds unread bytes, and then it is shut down (libcurl will not reuse it).
        func isClean(local: Int, peer: Int) -> Bool {
            guard let socket = sockets.removeValue(forKey: Self.key(local: local, peer: peer)) else { return true }
            return courier_socket_discard_if_unread(socket, Int32(local), Int32(peer)) == 0
        }
    }
#endif
