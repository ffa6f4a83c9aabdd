#if os(Linux)
    /// Failures of libcurl calls that tests inject into a ``CurlTransport``, to prove that every
    /// return code is checked: an option libcurl refuses (as an older or smaller libcurl does),
    /// a transfer the multi handle will not take. Empty in every transport users make.
    struct CurlFaults: Sendable, Hashable {
        /// Options (`CURLOPT_*` numbers) answered with this result code instead of being set.
        var refusedOptions: [Int32: Int32] = [:]
        /// The result of `curl_multi_add_handle`, instead of calling it.
        var addHandleResult: Int32?
    }
#endif
