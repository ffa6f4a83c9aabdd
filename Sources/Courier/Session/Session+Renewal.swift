import Foundation

/// Renewing the credential: a refresh (`refresh`) or a silent login (`logIn`), one at a time for
/// every request of the epoch, within the limits; and the end of a session the backend refused.
extension Session {
    /// A credential as a request sent it, with the counts that tell whether it was renewed since.
    struct Sent: Sendable {
        let credential: Credential
        let mark: Renewals.Mark
    }

    /// Who renews the credential: every request of the epoch that needs a renewal waits for the
    /// one under way. A logout cancels its task, so a pause between attempts ends at once.
    typealias Renewals = RenewalState<SharedOutcome<Sent>, Task<Void, Never>>

    /// `credential`, signed in now, as a request sends it. Called with `lock` held.
    private func signedIn(_ credential: Credential) -> Sent {
        Sent(credential: credential, mark: state.renewals.mark)
    }

    /// The answer that asked for something: its status and business code.
    struct Cause: Sendable {
        let status: Int
        let businessCode: BusinessCode?
    }

    /// What an answer asks of the session.
    enum Reaction {
        case refresh(Cause)
        case logIn(Cause)
        case askUser(Cause)
    }

    /// What an answer asks, or `nil` when it asks nothing. With `logIns` false (the endpoint
    /// skips the silent login) only a refresh.
    func reaction(to response: HTTPResponse, _ context: InterceptorContext, logIns: Bool) -> Reaction? {
        let hasCodes = !refreshCodes.isEmpty || (logIns && !(logInCodes.isEmpty && askUserCodes.isEmpty))
        let code = hasCodes ? context.businessCode(in: response) : nil
        let cause = Cause(status: response.status, businessCode: code)
        if logIns, let code {
            if askUserCodes.contains(code) { return .askUser(cause) }
            if logInCodes.contains(code) { return .logIn(cause) }
        }
        if refreshesOnUnauthorized && response.status == 401 { return .refresh(cause) }
        if let code, refreshCodes.contains(code) { return .refresh(cause) }
        return nil
    }

    /// The credential to send a request of `epoch` with, refreshed first when it is about to
    /// expire (a wait `timeline` records); `nil` while nobody is signed in.
    func credentialToSend(in epoch: SessionEpoch, client: () -> ClientHandle, timeline: TimelineRecorder? = nil)
        async throws(NetworkError) -> Sent?
    {
        try await load()
        let (sent, expiring) = try lock.withLock { () -> Result<(Sent?, Bool), NetworkError> in
            guard state.epoch == epoch.number else {
                return .failure(endErrorLocked(epoch.number, "the token was read"))
            }
            guard let credential = state.credential else { return .success((nil, false)) }
            let sent = signedIn(credential)
            return .success((sent, isExpiring(credential)))
        }.get()
        guard let sent, expiring, refresh != nil else { return sent }
        let start = timeline?.now
        defer { if let start { timeline?.waited(.tokenRefresh, since: start) } }
        return try await renewed(after: sent, in: epoch, for: .refresh(nil), client: client())
    }

    /// The credential signed in now, when a renewal replaced `sent`'s since (in `epoch`).
    func current(newerThan sent: Sent, in epoch: SessionEpoch) -> Sent? {
        lock.withLock {
            guard state.epoch == epoch.number, let credential = state.credential,
                state.renewals.mark.version != sent.mark.version
            else { return nil }
            return signedIn(credential)
        }
    }

    /// What a renewal is for: a refresh (for a refusing answer, or `nil` before expiry) or a
    /// silent login.
    enum Need {
        case refresh(Cause?)
        case logIn(Cause)
    }

    /// A credential newer than `sent`: one another request renewed meanwhile, the result of the
    /// renewal under way, or of a new one, which renews the credential signed in now.
    /// - Throws: ``NetworkError/Code/tokenRefreshFailed`` (a refresh failed or ran past its
    ///   limit), ``NetworkError/Code/sessionExpired`` (the session ended),
    ///   ``NetworkError/Code/cancelled`` (the caller was), or the epoch's end.
    func renewed(after sent: Sent, in epoch: SessionEpoch, for need: Need, client: ClientHandle)
        async throws(NetworkError) -> Sent
    {
        var need = need
        // Without a refresh, a login renews; without either, the session is over.
        if case .refresh(let cause) = need, refresh == nil {
            guard logInAgain != nil, let cause else { throw await end(epoch, cause, "The token expired.") }
            need = .logIn(cause)
        }
        if case .logIn(let cause) = need, logInAgain == nil {
            throw await end(epoch, cause, "The backend asked for a new login.")
        }
        while true {
            guard !Task.isCancelled else {
                throw NetworkError(.cancelled, "The request was cancelled while waiting for a new token.")
            }
            let step = try lock.withLock { () -> Result<Step, NetworkError> in
                Result { () throws(NetworkError) in try nextStep(after: sent, in: epoch, for: need) }
            }.get()
            switch step {
            case .use(let fresh):
                return fresh
            case .wait(let outcome):
                return try await Self.wait(for: outcome)
            case .waitThenDecide(let outcome):
                // A refresh runs: once it ends, a login is still needed (or not).
                do {
                    _ = try await Self.wait(for: outcome)
                } catch  where Task.isCancelled {
                    throw error
                } catch {}
            case .start(let id, let outcome, let base, let started):
                let task = Task { [self] in
                    let result: Result<Sent, any Error>
                    switch need {
                    case .refresh: result = await runRefresh(from: base, in: epoch, client: client)
                    case .logIn(let cause):
                        result = await runLogIn(from: base, cause: cause, in: epoch, started: started, client: client)
                    }
                    lock.withLock { state.renewals.ended(id) }
                    outcome.finish(result)
                }
                let isCurrent = lock.withLock { state.renewals.began(id, work: task) }
                // The epoch ended before the task was known: it stops now.
                if !isCurrent { task.cancel() }
                return try await Self.wait(for: outcome)
            case .end(let cause, let reason):
                throw await end(epoch, cause, reason)
            }
        }
    }

    private enum Step {
        case use(Sent)
        case wait(SharedOutcome<Sent>)
        case waitThenDecide(SharedOutcome<Sent>)
        /// A renewal of `base`, the credential signed in now; a login's start, counted.
        case start(Renewals.ID, SharedOutcome<Sent>, base: Sent, started: ContinuousClock.Instant)
        case end(Cause?, String)
    }

    /// What a request that needs a renewal does now, as ``RenewalState`` decides. Called with
    /// `lock` held; nothing in it waits, so only one request starts a renewal.
    private func nextStep(after sent: Sent, in epoch: SessionEpoch, for need: Need) throws(NetworkError) -> Step {
        guard state.epoch == epoch.number, let current = state.credential else {
            throw endErrorLocked(epoch.number, "a new token was awaited")
        }
        let base = signedIn(current)
        let now = ContinuousClock.now
        let window = limits.window
        let isLogIn: Bool
        let cause: Cause?
        switch need {
        case .refresh(let refreshCause): (isLogIn, cause) = (false, refreshCause)
        case .logIn(let logInCause): (isLogIn, cause) = (true, logInCause)
        }
        let step = state.renewals.next(
            after: sent.mark, for: isLogIn ? .logIn : .refresh, signedInIsExpiring: isExpiring(current), now: now,
            limits: limits, make: { SharedOutcome<Sent>() })
        switch step {
        case .useSignedIn: return .use(base)
        case .wait(let outcome): return .wait(outcome)
        case .waitThenDecide(let outcome): return .waitThenDecide(outcome)
        case .start(let id, let outcome): return .start(id, outcome, base: base, started: now)
        case .tooManyRefreshes:
            throw NetworkError(
                .tokenRefreshFailed,
                "The token was refreshed \(limits.refreshes) times within \(window); not trying again yet.")
        case .tooManyLogIns:
            return .end(cause, "Logged in again \(limits.logIns) times within \(window); not trying again yet.")
        }
    }

    private static func wait(for outcome: SharedOutcome<Sent>) async throws(NetworkError) -> Sent {
        do {
            return try await outcome.value(whileWaitingFor: "a new token")
        } catch {
            throw NetworkError.wrapping(error)
        }
    }

    /// Whether `credential` expires within the leeway; for one the session renewed itself, at
    /// most half its lifetime, and one that arrived expired is not (the server judges it).
    /// Called with `lock` held.
    private func isExpiring(_ credential: Credential) -> Bool {
        guard let expiresAt = credential.expiresAt else { return false }
        // In seconds as a Double: a server's lifetime can be any number (1e300), which a
        // Duration cannot hold.
        var leeway = limits.refreshLeeway.seconds
        if let issued = state.issued, issued.credential.sameTokens(as: credential) {
            let lifetime = expiresAt.timeIntervalSince(issued.at)
            guard lifetime > 0 else { return false }
            leeway = min(leeway, lifetime / 2)
        }
        return expiresAt.timeIntervalSinceNow <= leeway
    }

    // MARK: - The renewals

    /// Refreshes `base`, the credential signed in when it began: up to the limit's attempts,
    /// checking the epoch before each one and after each pause, so a logout meanwhile stops it;
    /// then stores the result. A refresh the backend answers with a log-in code is a login.
    private func runRefresh(from base: Sent, in epoch: SessionEpoch, client: ClientHandle) async -> Result<
        Sent, any Error
    > {
        if let stored = await newerStored(than: base, in: epoch) { return stored }
        var lastError: (any Error)?
        for attempt in 1...limits.refreshAttempts {
            if attempt > 1 { try? await Task.sleep(for: limits.refreshBackoff) }
            do {
                try epoch.check("the token was being refreshed")
                guard let refresh else { break }
                let fresh = try await refresh(TokenRefresh(previous: base.credential, client: client))
                return await commit(fresh, replacing: base, in: epoch, isLogIn: false)
            } catch {
                let failure = NetworkError.wrapping(error)
                guard epoch.isCurrent else {
                    return .failure(endError(of: epoch.number, while: "refreshing the token"))
                }
                if failure.code == .cancelled || Task.isCancelled {
                    return .failure(NetworkError(.cancelled, "The token refresh was cancelled.", underlying: error))
                }
                // The backend says the refresh token is no good either: the session is gone.
                if let code = failure.businessCode, logInCodes.contains(code) || askUserCodes.contains(code) {
                    let cause = Cause(status: failure.status ?? 200, businessCode: code)
                    let now = ContinuousClock.now
                    guard logInCodes.contains(code), logInAgain != nil,
                        lock.withLock({ state.renewals.admitLogIn(at: now, limits: limits) })
                    else {
                        return .failure(await end(epoch, cause, "The backend refused the token refresh."))
                    }
                    return await runLogIn(from: base, cause: cause, in: epoch, started: now, client: client)
                }
                lastError = error
            }
        }
        return .failure(
            NetworkError(
                .tokenRefreshFailed, "Refreshing the token failed \(limits.refreshAttempts) times.",
                underlying: lastError))
    }

    /// Logs in again without the user, and stores the result. A login that cannot reach the
    /// server fails its requests without ending the session; one that was cancelled does not
    /// count against the limit; any other failure ends the session.
    private func runLogIn(
        from base: Sent, cause: Cause, in epoch: SessionEpoch, started: ContinuousClock.Instant, client: ClientHandle
    ) async -> Result<Sent, any Error> {
        if let stored = await newerStored(than: base, in: epoch) { return stored }
        guard let logInAgain, epoch.isCurrent else {
            return .failure(endError(of: epoch.number, while: "logging in again"))
        }
        eventHub.send(.reLoginNeeded)
        let fresh: Credential
        do {
            fresh = try await logInAgain(
                ReLogin(
                    status: cause.status, businessCode: cause.businessCode, previous: base.credential, client: client))
        } catch {
            guard epoch.isCurrent else { return .failure(endError(of: epoch.number, while: "logging in again")) }
            let failure = NetworkError.wrapping(error)
            if failure.code == .cancelled || Task.isCancelled {
                lock.withLock { state.renewals.logInCancelled(startedAt: started) }
                return .failure(NetworkError(.cancelled, "Logging in again was cancelled.", underlying: error))
            }
            // A login that could not reach the server says nothing about the session.
            if let unreachable = error as? NetworkError, [.offline, .transport, .timedOut].contains(unreachable.code) {
                return .failure(unreachable)
            }
            return .failure(await end(epoch, cause, "Logging in again failed.", underlying: error))
        }
        let result = await commit(fresh, replacing: base, in: epoch, isLogIn: true)
        if case .success = result { eventHub.send(.reLoginSucceeded) }
        return result
    }

    /// A credential of the same user in the store, other than `base`'s, that someone else
    /// wrote (an app extension sharing the keychain): taken instead of a renewal. Read as one of
    /// the store's serial writes, so a login under way is not read into this epoch; and only
    /// one with the same ``Credential/userID`` as `base`'s (two without one count as the same
    /// user, as they do for the cache: a store that keeps no user ID cannot tell them apart).
    private func newerStored(than base: Sent, in epoch: SessionEpoch) async -> Result<Sent, any Error>? {
        await writes.run { () async -> Result<Sent, any Error>? in
            guard let stored = try? await store.credential(), !stored.sameTokens(as: base.credential),
                stored.userID == base.credential.userID
            else { return nil }
            return lock.withLock {
                guard state.epoch == epoch.number, state.renewals.mark.version == base.mark.version, !isExpiring(stored)
                else {
                    return nil
                }
                return .success(adopt(stored, isLogIn: false))
            }
        }
    }

    /// Stores a renewed credential in place of `base`'s, unless the epoch is over: checked inside
    /// the store's lock, so a logout that came first wins, and one that comes later clears it.
    /// The store's own value is the one replaced, so a store that keeps a credential less
    /// precisely (the expiry to the second, no user ID) still takes it. A renewal keeps the user:
    /// one for another user ends the session; one stored without a user takes the renewal's.
    private func commit(_ fresh: Credential, replacing base: Sent, in epoch: SessionEpoch, isLogIn: Bool) async
        -> Result<Sent, any Error>
    {
        var fresh = fresh
        if let known = base.credential.userID {
            guard fresh.userID == nil || fresh.userID == known else {
                let cause = Cause(status: 200, businessCode: nil)
                return .failure(await end(epoch, cause, "The renewed credential belongs to another user."))
            }
            fresh.userID = known
        }
        return await writes.run { () async -> Result<Sent, any Error> in
            do {
                try epoch.check("the new token was stored")
                let stored = try await store.credential()
                guard let stored, stored.sameTokens(as: base.credential) else {
                    return .failure(
                        NetworkError(.tokenRefreshFailed, "The stored credential was changed outside the session."))
                }
                guard try await store.replaceCredential(stored, with: fresh) else {
                    return .failure(
                        NetworkError(.tokenRefreshFailed, "The stored credential was changed outside the session."))
                }
            } catch let error as NetworkError {
                return .failure(error)
            } catch {
                return .failure(NetworkError(.credentialStore, "Storing the new credential failed.", underlying: error))
            }
            return lock.withLock {
                // A logout since the check waits for this write to end, and then clears it.
                guard state.epoch == epoch.number else {
                    return .failure(endErrorLocked(epoch.number, "the new token was stored"))
                }
                state.issued = (fresh, Date())
                return .success(adopt(fresh, isLogIn: isLogIn))
            }
        }
    }

    /// Makes `credential` the signed-in one, within the epoch. Called with `lock` held.
    private func adopt(_ credential: Credential, isLogIn: Bool) -> Sent {
        state.credential = credential
        return Sent(credential: credential, mark: state.renewals.changed(isLogIn: isLogIn))
    }

    /// Ends the session the backend refused, once for its epoch however many requests saw it:
    /// a new epoch with nobody signed in, the credential removed from the store, every request
    /// of the epoch cancelled (each then fails with ``NetworkError/Code/sessionExpired`` and
    /// `cause`), the caches emptied, and ``SessionEvent/sessionExpired``.
    /// - Returns: The error for the request that saw it: the epoch's end when it had ended
    ///   already (``NetworkError/Code/cancelled`` after a logout).
    func end(_ epoch: SessionEpoch, _ cause: Cause?, _ reason: String, underlying: (any Error)? = nil) async
        -> NetworkError
    {
        let ended: EndedEpoch? = await writes.run {
            let ended = lock.withLock {
                state.epoch == epoch.number ? advance(to: nil, endedByBackend: true, cause: cause) : nil
            }
            guard let ended else { return nil }
            // Should it fail, the dead credential stays stored, and the backend refuses it again.
            _ = await Task { [store] in try await store.setCredential(nil) }.result
            return ended
        }
        guard let ended else { return endError(of: epoch.number, while: "the session ended") }
        eventHub.send(.sessionExpired)
        await endWork(of: ended, purging: true)
        var error = NetworkError(.sessionExpired, reason, underlying: underlying)
        error.status = cause?.status
        error.businessCode = cause?.businessCode
        return error
    }
}
