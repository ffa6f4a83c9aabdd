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
    /// Redirects are not followed by `URLSession`: each 3xx is delivered as the answer and the
    /// transport follows it by ``RedirectPolicy``.
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
                let space = challenge.protectionSpace
                if space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust {
                    guard ServerTrust.narrows(tls, host: space.host) else {
                        return completionHandler(.performDefaultHandling, nil)
                    }
                    guard ServerTrust.accepts(trust, host: space.host, options: tls) else {
                        call(for: task)?.stop(
                            NetworkError(.tls, "The server's certificate or public key is not one the client trusts."))
                        return completionHandler(.cancelAuthenticationChallenge, nil)
                    }
                    return completionHandler(.useCredential, URLCredential(trust: trust))
                }
            #endif
            #if canImport(FoundationNetworking)
                if let failure = challenge.failureResponse as? HTTPURLResponse {
                    call(for: task)?.complete(error: nil, override: failure)
                }
                completionHandler(.cancelAuthenticationChallenge, nil)
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
            /// Apple platforms: the phase timings and protocol of the task's last network load.
            func urlSession(
                _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
            ) {
                let transactions = metrics.transactionMetrics
                guard let last = transactions.last(where: { $0.resourceFetchType == .networkLoad }) ?? transactions.last
                else { return }
                call(for: task)?.collected(
                    timings: TransferTimings(
                        start: last.fetchStartDate, nameLookupEnd: last.domainLookupEndDate,
                        connectEnd: last.secureConnectionStartDate ?? last.connectEndDate,
                        tlsEnd: last.secureConnectionEndDate,
                        firstByte: last.responseStartDate, end: last.responseEndDate),
                    httpVersion: TransferTimings.httpVersion(fromProtocolName: last.networkProtocolName))
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
        /// The delegate queue on Linux: serial, with backpressure.
        ///
        /// FoundationNetworking hands every 16 KB body piece to the delegate queue with
        /// `addOperation` from its process-wide work thread and never waits. When the delegate
        /// falls behind (a download written to a disk that stalls on writeback), pieces pile up
        /// in memory: 1 GB downloads were seen to grow the process by 230–340 MB. Here
        /// `addOperation` makes that thread wait while more than ``limit`` blocks are queued, so
        /// libcurl stops reading the socket and TCP slows the server down instead. Each wait is
        /// bounded (``maximumWait``), so a delegate block that itself waits for the work thread
        /// (a cancel) can never deadlock.
        ///
        /// The blocks run on a serial Dispatch queue of its own rather than through
        /// `OperationQueue`: FoundationNetworking only ever calls `addOperation(_:)` with a
        /// block, and swift-corelibs-foundation's `OperationQueue` under a flood of them (an
        /// answer that never ends) was seen to stall for tens of seconds on its own lock, with
        /// every `URLSession` in the process waiting behind it.
        ///
        /// `@unchecked Sendable`: `pending` is guarded by `condition`.
        final class DelegateQueue: OperationQueue, @unchecked Sendable {
            /// Queued blocks (about 1 MB of body pieces) above which the caller waits.
            static let limit = 64
            /// The longest one `addOperation` waits.
            static let maximumWait = Duration.seconds(1)

            private let serial = DispatchQueue(label: "Courier.URLSessionTransport.delegate")
            private let condition = NSCondition()
            private var pending = 0

            override func addOperation(_ block: @escaping @Sendable () -> Void) {
                condition.withLock { pending += 1 }
                serial.async { [self] in
                    block()
                    condition.withLock {
                        pending -= 1
                        if pending <= Self.limit { condition.broadcast() }
                    }
                }
                condition.lock()
                defer { condition.unlock() }
                let deadline = Date(timeIntervalSinceNow: Self.maximumWait.seconds)
                while pending > Self.limit, condition.wait(until: deadline) {}
            }
        }
    }
#endif
