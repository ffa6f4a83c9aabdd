import Courier
import CourierTesting
import Foundation

extension Walkthrough {
    /// Step 10: a multipart upload streamed from disk and a download to a file, each with a
    /// progress bar; the download breaks half-way and is resumed.
    func transfers() async {
        heading("10. Transfers: multipart upload from disk, download to a file, resume")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        await step {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let video = folder.appendingPathComponent("holiday.mp4")
            try Data((0..<24_000_000 as Range<Int>).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: video)
            var form = MultipartForm(fields: ["title": "Holiday", "album": "2026"])
            form.append(name: "video", fileAt: video)
            form.append(name: "cover", data: Data("not really a png".utf8), filename: "cover.png")
            let upload = client.upload(.upload(form))
            await ProgressBar(label: "upload  ").follow(upload.progressUpdates())
            let stored = try await upload.value
            print("   server stored: \(stored.joined(separator: ", "))")
        }
        await step {
            let destination = folder.appendingPathComponent("report.bin")
            let first = client.download(.report, to: destination)
            await ProgressBar(label: "download").follow(first.progressUpdates())
            do {
                _ = try await first.value
            } catch let error as NetworkError {
                guard let resumeData = error.resumeData else { throw error }
                print("   ✗ \(error.code): \(error.message) — \(resumeData.bytesReceived / 1_000_000) MB kept")
                let exists = FileManager.default.fileExists(atPath: destination.path)
                print("   at the destination: \(exists ? "a half file (wrong!)" : "nothing")")
                let resumed = client.resumeDownload(resumeData)
                await ProgressBar(label: "resume  ").follow(resumed.progressUpdates())
                let file = try await resumed.value
                print(
                    "   resumed from byte \(file.resumedFrom) (HTTP \(file.status)); \(file.byteCount) bytes at \(file.url.lastPathComponent)"
                )
                let intact = try Data(contentsOf: destination) == DemoBackend.reportContent
                print("   content \(intact ? "identical to the server's" : "DIFFERENT")")
            }
        }
    }
}

extension Endpoint where Response == [String] {
    /// Uploads media; the backend answers with what it stored.
    static func upload(_ form: MultipartForm) -> Self { .post("media", body: .multipart(form)) }
}

extension DownloadEndpoint {
    /// The demo report file.
    static var report: Self { .download("files/report.bin") }
}

/// A terminal progress bar: redrawn in place on a terminal, a line per quarter otherwise.
struct ProgressBar {
    let label: String

    func follow(_ progress: AsyncStream<TransferProgress>) async {
        let live = isatty(STDOUT_FILENO) != 0
        var lastQuarter = -1
        var last: TransferProgress?
        for await step in progress {
            last = step
            let fraction = step.fraction ?? 0
            if live {
                print("\r   \(label) \(bar(fraction)) \(step)   ", terminator: "")
                fflush(nil)  // all streams: `stdout` itself is not concurrency-safe to name
            } else if Int(fraction * 4) > lastQuarter {
                lastQuarter = Int(fraction * 4)
                print("   \(label) \(bar(fraction)) \(step)")
            }
        }
        if live { print("") }
        if !live, let last, lastQuarter < 4 { print("   \(label) \(bar(last.fraction ?? 0)) \(last) (stopped)") }
    }

    private func bar(_ fraction: Double) -> String {
        let filled = Int((fraction * 30).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "]"
            + String(format: " %3d%%", Int(fraction * 100))
    }
}
