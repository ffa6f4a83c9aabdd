import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The session-level delegate: routes each task's callbacks to its ``Call``.
    ///
    /// On Linux only a session delegate is asked about challenges and redirects. A 401 with
    /// `WWW-Authenticate: Basic` arrives as a challenge that hangs forever under default handling,
    /// so the delegate completes the call with the 401 and its body (already received) and
    /// cancels the challenge. On Apple platforms every challenge but server trust is rejected,
    /// which delivers the 401 as an answer and offers no credential.
    ///
    /// Redirects are not followed by `URLSession`: each 3xx is delivered as the answer, and the
    /// client follows it (see ``SendContract``).
    ///
    /// One delegate serves the transport's session and the single-use sessions of requests that
    /// are not idempotent, so calls are found by task object (task identifiers are per session).
    /// A registered task is held, so its identity cannot be reused while it is registered.
    ///
    /// `@unchecked Sendable`: `calls` is guarded by `lock`.
    final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [ObjectIdentifier: (task: URLSessionTask, call: Call)] = [:]
        private let tls: TLSOptions

        init(tls: TLSOptions) { self.tls = tls }

        func register(_ call: Call, for task: URLSessionTask) {
            lock.withLock { calls[ObjectIdentifier(task)] = (task, call) }
        }

        /// Stops routing a task's callbacks (its call has ended early).
        func forget(_ task: URLSessionTask) {
            _ = lock.withLock { calls.removeValue(forKey: ObjectIdentifier(task)) }
        }

        private func call(for task: URLSessionTask) -> Call? {
            lock.withLock { calls[ObjectIdentifier(task)]?.call }
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            call(for: dataTask)?.received(response)
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            call(for: dataTask)?.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let call = lock.withLock { calls.removeValue(forKey: ObjectIdentifier(task))?.call }
            // A redirect answer may end without a `didReceive(response)`.
            call?.complete(error: error, fallback: task.response as? HTTPURLResponse)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            #if canImport(Security)
                let trust = ServerTrust.answer(challenge, options: tls) {
                    call(for: task)?.stop(ServerTrust.untrusted)
                }
                if let trust { return completionHandler(trust.disposition, trust.credential) }
            #endif
            #if canImport(FoundationNetworking)
                if let failure = challenge.failureResponse as? HTTPURLResponse {
                    call(for: task)?.complete(error: nil, override: failure)
                }
                // FoundationNetworking cancels the task in the handler, which waits for its work
                // thread: this thread (see `DelegateQueue`).
                URLSessionTransport.cancelCalls.async { completionHandler(.cancelAuthenticationChallenge, nil) }
            #else
                // Apple platforms: no credential is ever offered (default handling could answer
                // Negotiate with the user's single sign-on, or a client certificate from the
                // keychain). Rejected, a 401 arrives with its body through the usual
                // callbacks, and TLS goes on without a client certificate.
                completionHandler(.rejectProtectionSpace, nil)
            #endif
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            call(for: task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
        }

        #if !canImport(FoundationNetworking)
            /// Apple platforms: the phase timings, protocol, connection and byte counts of the task's
            /// last network load.
            func urlSession(
                _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
            ) {
                let transactions = metrics.transactionMetrics
                guard let last = transactions.last(where: { $0.resourceFetchType == .networkLoad }) ?? transactions.last
                else { return }
                var facts = ExchangeFacts()
                if let start = last.fetchStartDate, let sent = last.requestEndDate, sent >= start {
                    facts.requestSent = .microseconds(
                        Int64((min(sent.timeIntervalSince(start), 3.2e7) * 1e6).rounded()))
                }
                facts.isReused = last.isReusedConnection
                facts.remoteAddress = last.remoteAddress.map { ExchangeFacts.address($0, port: last.remotePort) }
                facts.requestHeaderBytes = Int(last.countOfRequestHeaderBytesSent)
                facts.requestBodyBytes = Int(last.countOfRequestBodyBytesSent)
                facts.responseHeaderBytes = Int(last.countOfResponseHeaderBytesReceived)
                facts.responseBodyBytes = Int(last.countOfResponseBodyBytesReceived)
                call(for: task)?.collected(
                    timings: TransferTimings(
                        start: last.fetchStartDate, nameLookupEnd: last.domainLookupEndDate,
                        connectEnd: last.secureConnectionStartDate ?? last.connectEndDate,
                        tlsEnd: last.secureConnectionEndDate,
                        firstByte: last.responseStartDate, end: last.responseEndDate),
                    httpVersion: TransferTimings.httpVersion(fromProtocolName: last.networkProtocolName),
                    facts: facts)
            }
        #endif

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }
}

#if canImport(FoundationNetworking)
    extension URLSessionTransport {
        /// The delegate queue on Linux: every block runs at once, on the thread that adds it.
        ///
        /// FoundationNetworking adds its delegate calls from its process-wide work thread (in
        /// order for each task) and never waits for them. Run there, they cost no thread
        /// switch: an `OperationQueue` or a serial Dispatch queue adds one per callback, a
        /// tenth of a small request's time on two cores. It also bounds memory: when the
        /// delegate falls behind (a download written to a disk that stalls on writeback), the
        /// work thread waits for it, so libcurl stops reading the socket and TCP slows the
        /// server down, where a queue would pile up the 16 KB body pieces (1 GB downloads were
        /// seen to grow the process by 230–340 MB).
        ///
        /// So every delegate method returns at once and never calls into the task or session
        /// synchronously: `cancel()`, `suspend()` and `resume()` wait for the work thread, which
        /// is the caller. Cancels go to ``URLSessionTransport/cancelCalls``, and so does the
        /// answer to an authentication challenge (FoundationNetworking cancels the task in it).
        final class DelegateQueue: OperationQueue, @unchecked Sendable {
            override func addOperation(_ block: @escaping @Sendable () -> Void) {
                block()
            }
        }
    }
#endif
