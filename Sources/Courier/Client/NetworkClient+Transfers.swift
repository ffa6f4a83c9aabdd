import Foundation

extension NetworkClient {
    /// Sends an endpoint whose body is large (a ``MultipartForm`` or a file) and reports upload
    /// progress. The answer is validated and decoded like ``send(_:)``, and every interceptor
    /// applies (token, signing of the text fields; a retry only when the endpoint allows it).
    ///
    /// ```swift
    /// let task = client.upload(Endpoint<Media>.post("media", body: .multipart(form)))
    /// for await step in task.progressUpdates() { print(step) }
    /// let media = try await task.value
    /// ```
    ///
    /// Written without a type, `client.upload(.post("media", body: .multipart(form)))` is an
    /// upload whose payload is not needed: its answer is still checked (status, envelope code)
    /// and decoded as ``EmptyResponse``.
    /// - Parameter endpoint: The endpoint, with any body.
    /// - Returns: The running transfer.
    public nonisolated func upload<Response>(_ endpoint: Endpoint<Response>) -> TransferTask<Response> {
        startUpload(endpoint)
    }

    /// Uploads an endpoint whose payload is not needed, so that it can be written without a
    /// type: `client.upload(.post("media", body: .multipart(form)))`. The answer is checked and
    /// decoded like any other (an envelope by default).
    /// - Parameter endpoint: The endpoint, with any body.
    /// - Returns: The running transfer.
    public nonisolated func upload(_ endpoint: Endpoint<EmptyResponse>) -> TransferTask<EmptyResponse> {
        startUpload(endpoint)
    }

    private nonisolated func startUpload<Response>(_ endpoint: Endpoint<Response>) -> TransferTask<Response> {
        let reporter = ProgressReporter(direction: .upload)
        // Registered now: the transfer has begun for the caller, and a cancelAll() or a logout
        // before its task runs stops it.
        let entry = register()
        return TransferTask(reporter: reporter) { [self] in
            defer { finish(entry) }
            var request = try makeRequest(endpoint)
            request.progress = reporter
            request = observing(request)
            let decoding = endpoint.decoding
            let method = request.method
            let timeline = request.timeline
            do {
                let scope = try await scope(of: entry, in: nil, request)
                let answered = try await perform(request, of: endpoint, in: scope) { [self] response in
                    let start = timeline?.now
                    defer { if let start { timeline?.decoded(since: start) } }
                    try validation.validate(response, method: method, checksContentType: decoding.checksContentType)
                    return Answered(value: try decoding.decode(response, decodingContext), response: response)
                }
                timeline?.end(answered.response, decoder: decodingContext.decoder)
                reporter.finish(total: reporter.current.expected ?? reporter.current.completed)
                return answered.value
            } catch {
                reporter.finish(total: nil)
                let failure = await afterItsEpoch(NetworkError.wrapping(error), of: entry)
                timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
                throw failure
            }
        }
    }

    /// Downloads an endpoint's answer into a file, streamed to disk so memory stays flat
    /// whatever the size.
    ///
    /// The bytes go to a hidden file next to `destination` and are moved into place only when
    /// the answer is complete and valid: after a failure nothing is at the destination, and an
    /// error status never produces a file (the answer's body is in the error). When the
    /// transfer breaks after bytes arrived, the error's ``NetworkError/resumeData`` continues it
    /// with ``resumeDownload(_:)``.
    ///
    /// ```swift
    /// let task = client.download(.report(id), to: destination)
    /// let file = try await task.value
    /// ```
    /// - Parameters:
    ///   - endpoint: What to download.
    ///   - destination: The file URL to store it at; its directory must exist.
    ///   - overwrite: What happens when `destination` exists.
    /// - Returns: The running transfer.
    public nonisolated func download(
        _ endpoint: DownloadEndpoint, to destination: URL, overwrite: OverwritePolicy = .fail
    ) -> TransferTask<DownloadedFile> {
        let reporter = ProgressReporter(direction: .download)
        let entry = register()
        return TransferTask(reporter: reporter) { [self] in
            try await runDownload(
                DownloadJob(endpoint: endpoint, destination: destination, overwrite: overwrite), reporter: reporter,
                registered: entry)
        }
    }

    /// Continues a download that broke: asks for the remaining bytes with `Range` and
    /// `If-Range`, and starts over when the server does not take ranges, the resource changed,
    /// or no validator was known.
    /// - Parameter resumeData: From the failed download's ``NetworkError/resumeData``.
    /// - Returns: The running transfer.
    public nonisolated func resumeDownload(_ resumeData: DownloadResumeData) -> TransferTask<DownloadedFile> {
        let kept = resumeData.continuesWithRange ? resumeData.bytesReceived : 0
        let reporter = ProgressReporter(direction: .download, completed: kept)
        let job = DownloadJob(
            endpoint: resumeData.endpoint, destination: resumeData.destination, overwrite: resumeData.overwrite,
            partialFile: resumeData.partialFile,
            resume: resumeData.continuesWithRange ? (resumeData.bytesReceived, resumeData.validator ?? "") : nil)
        let entry = register()
        return TransferTask(reporter: reporter) { [self] in
            try await runDownload(job, reporter: reporter, registered: entry)
        }
    }

    /// Runs a download registered in flight as `entry` when it was asked for.
    private nonisolated func runDownload(
        _ job: DownloadJob, reporter: ProgressReporter, registered entry: InFlightRegistry.Entry
    ) async throws -> DownloadedFile {
        defer { finish(entry) }
        do {
            let file = try await downloadOnce(job, reporter: reporter, registered: entry)
            reporter.finish(total: file.byteCount)
            return file
        } catch {
            reporter.finish(total: nil)
            throw error
        }
    }

    private nonisolated func downloadOnce(
        _ job: DownloadJob, reporter: ProgressReporter, registered entry: InFlightRegistry.Entry
    ) async throws(NetworkError) -> DownloadedFile {
        try job.checkDestination()
        var request = try makeRequest(job.endpoint.endpoint)
        let offset = job.resume?.offset ?? 0
        if let (offset, validator) = job.resume {
            request.headers["Range"] = "bytes=\(offset)-"
            request.headers["If-Range"] = validator
        }
        request.download = DownloadTarget(
            file: job.partialFile, offset: offset, maximumSize: job.endpoint.maximumResponseBodySize)
        request.progress = reporter
        request = observing(request)
        let method = request.method
        do {
            let scope = try await scope(of: entry, in: nil, request)
            let validation = validation
            let stored = try await perform(
                request, of: job.endpoint.endpoint, in: scope,
                discard: { stored in try? FileManager.default.removeItem(at: stored.value.url) },
                finish: { response throws(NetworkError) in
                    try validation.validate(response, method: method, checksContentType: false)
                    return Answered(value: try job.store(response), response: response)
                })
            request.timeline?.end(stored.response)
            return stored.value
        } catch {
            let failure = job.failed(await afterItsEpoch(error, of: entry))
            request.timeline?.end(nil, failure: failure, decoder: decodingContext.decoder)
            throw failure
        }
    }
}

/// One download's files: the hidden partial file next to the destination and the move into
/// place.
struct DownloadJob: Sendable {
    let endpoint: DownloadEndpoint
    let destination: URL
    let overwrite: OverwritePolicy
    let partialFile: URL
    /// For a resume: the bytes already stored and the validator for `If-Range`.
    let resume: (offset: Int64, validator: String)?

    init(
        endpoint: DownloadEndpoint, destination: URL, overwrite: OverwritePolicy, partialFile: URL? = nil,
        resume: (Int64, String)? = nil
    ) {
        self.endpoint = endpoint
        self.destination = destination
        self.overwrite = overwrite
        self.partialFile =
            partialFile
            ?? destination.deletingLastPathComponent().appendingPathComponent(
                ".\(destination.lastPathComponent).courier-download-\(UUID().uuidString.prefix(8))")
        self.resume = resume
    }

    /// Fails early for a destination that cannot be written.
    func checkDestination() throws(NetworkError) {
        guard destination.isFileURL else {
            throw NetworkError(.invalidRequest, "The download destination \(destination) is not a file URL.")
        }
        var isDirectory: ObjCBool = false
        let directory = destination.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw NetworkError(.fileSystem, "The download destination's directory \(directory) does not exist.")
        }
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory) {
            guard overwrite == .replace, !isDirectory.boolValue else {
                throw NetworkError(
                    .fileSystem, "The download destination \(destination.lastPathComponent) exists already.")
            }
        }
    }

    /// Moves a complete, valid answer into place.
    func store(_ response: HTTPResponse) throws(NetworkError) -> DownloadedFile {
        if response.bodyFile == nil {
            // A transport that does not stream to files (an in-memory mock) returns the bytes.
            let output = try PrivateFile.create(at: partialFile)
            defer { try? output.close() }
            do {
                try output.write(contentsOf: response.body)
            } catch {
                throw NetworkError(.fileSystem, "The download could not be written.", underlying: error)
            }
        }
        let size = FileSource.size(of: partialFile)
        try moveIntoPlace()
        return DownloadedFile(
            url: destination, byteCount: size, resumedFrom: response.status == 206 ? resume?.offset ?? 0 : 0,
            status: response.status, headers: response.headers)
    }

    private func moveIntoPlace() throws(NetworkError) {
        let moved: Bool
        switch overwrite {
        case .replace: moved = rename(partialFile.path, destination.path) == 0
        case .fail: moved = link(partialFile.path, destination.path) == 0 && unlink(partialFile.path) == 0
        }
        guard moved else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: partialFile)
            throw NetworkError(
                .fileSystem, "The download could not be moved to \(destination.lastPathComponent): \(reason).")
        }
    }

    /// The error for a failed attempt: with resume data when a transfer broke after bytes were
    /// stored, otherwise with the partial file removed. A resume that failed for a passing
    /// reason before its answer reached the file (no answer: offline, refused, timed out; or
    /// 408, 429, 5xx) leaves the file as it was and returns resume data for it again, so an
    /// attempt made offline loses nothing. A cancelled one, or one refused for good (a 416),
    /// drops it, as a first attempt would.
    func failed(_ error: NetworkError) -> NetworkError {
        let passing = error.status.map { [408, 429].contains($0) || (500..<600).contains($0) } ?? true
        if let resume, passing, error.code != .cancelled, FileSource.size(of: partialFile) == resume.offset {
            var error = error
            error.resumeData = DownloadResumeData(
                endpoint: endpoint, destination: destination, overwrite: overwrite, partialFile: partialFile,
                bytesReceived: resume.offset, validator: resume.validator, acceptsRanges: true)
            return error
        }
        let stored = FileSource.size(of: partialFile)
        let broke = error.code == .transport || error.code == .timedOut
        guard broke, stored > 0, let status = error.status, status == 200 || status == 206 else {
            try? FileManager.default.removeItem(at: partialFile)
            return error
        }
        let headers = error.headers ?? [:]
        var error = error
        error.resumeData = DownloadResumeData(
            endpoint: endpoint, destination: destination, overwrite: overwrite, partialFile: partialFile,
            bytesReceived: stored, validator: headers["ETag"] ?? headers["Last-Modified"],
            acceptsRanges: headers["Accept-Ranges"]?.lowercased() != "none")
        return error
    }
}

extension FileSource {
    /// The size of a file, 0 when it is missing.
    static func size(of url: URL) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// A transfer's value and the answer it came from, for the request's timeline.
private struct Answered<Value: Sendable>: Sendable {
    let value: Value
    let response: HTTPResponse
}
