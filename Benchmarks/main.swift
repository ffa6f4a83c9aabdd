// courier-benchmarks: Courier side by side with raw URLSession in one run.
//
//   swift run -c release courier-benchmarks [--quick] [--json PATH] [--svg PATH] [--check] [--only S1,S7]
//   swift run -c release courier-benchmarks --from RUN.json --svg PATH   (the chart of a saved run)
//
// The peer is nginx on 127.0.0.1 when installed (`.ci/run` installs it), else CourierTesting's
// LoopbackServer; its own capacity is measured first on raw sockets. Each scenario runs Courier
// and its baseline interleaved after a warm-up and reports the medians and their ratio.
import Foundation

// As many descriptors as the system allows: S20 holds 1,000 connections open in this process
// and in its echo server, more than a soft limit of 1,024 leaves room for.
#if os(Linux)
    var descriptorLimit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptorLimit) == 0,
        descriptorLimit.rlim_cur < descriptorLimit.rlim_max
    {
        descriptorLimit.rlim_cur = descriptorLimit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptorLimit)
    }
#endif
// The WebSocket rows' echo server, which S20 starts as a process of its own.
if CommandLine.arguments.contains(WebSocketEchoPeer.flag) { WebSocketEchoPeer.serve() }
#if os(Linux)
    // Before any other thread starts: a namespace is made for the thread that asks, and the
    // threads it starts later (S18 shows raw URLSession its certificate authority there).
    _ = RawSessionTrust.ownMounts
#endif
let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let check = arguments.contains("--check")
func value(after flag: String) -> String? {
    arguments.firstIndex(of: flag).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let only = value(after: "--only").map { Set($0.split(separator: ",").map(String.init)) }
/// Writes the chart of `results` where `--svg` says, if it does.
func writeChart(_ results: [Measurement], title: String) throws {
    guard let path = value(after: "--svg") else { return }
    try Data(Chart.svg(results, title: title).utf8).write(to: URL(fileURLWithPath: path))
}
if arguments.contains("--svg"), value(after: "--svg") == nil || value(after: "--svg")!.hasPrefix("--") {
    print("--svg needs the path of the chart to write")
    exit(2)
}
if let saved = value(after: "--from") {
    guard value(after: "--svg") != nil else {
        print("--from draws a saved run: give --svg PATH too")
        exit(2)
    }
    let results = try JSONDecoder().decode([Measurement].self, from: Data(contentsOf: URL(fileURLWithPath: saved)))
    try writeChart(results, title: "courier-benchmarks: \(URL(fileURLWithPath: saved).lastPathComponent)")
    exit(0)
}

let scenarios = try Scenarios(quick: quick)
defer { scenarios.stop() }
print("peer capacity — \(scenarios.serverCapacity())")
var all: [(String, () async throws -> [Measurement])] = [
    ("S1", scenarios.s1Sequential), ("S2", scenarios.s2Concurrent), ("S3", scenarios.s3FullChain),
    ("S4", scenarios.s4Scaling), ("S4-scale", scenarios.s4Scale), ("S5", scenarios.s5EnvelopeDecode),
    ("S6", scenarios.s6Signing),
    ("S7", scenarios.s7Download), ("S8", scenarios.s8Upload), ("S9", scenarios.s9RefreshStorm),
    ("S10", scenarios.s10Soak), ("S11", scenarios.s11Cache), ("S12", scenarios.s12Redaction),
    ("S13", scenarios.s13Streams), ("S14", scenarios.s14Pages), ("S15", scenarios.s15Recording),
    ("S16", scenarios.s16Observation), ("S19", scenarios.s19Bridge), ("S20", scenarios.s20WebSocket),
]
#if os(Linux)
    all += [("S17", scenarios.s17Limit), ("S18", scenarios.s18Secure)]
#endif
var results: [Measurement] = []
// The soak (S10) is never short: it runs when named (CI: --only S10 --check) or in a full run.
for (name, run) in all where only?.contains(name) ?? !(quick && name == "S10") {
    for measurement in try await run() {
        results.append(measurement)
        print(Report.row(measurement))
    }
}
print(Report.table(results, quick: quick, peer: scenarios.peer.name))
if let jsonPath = value(after: "--json") {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(results).write(to: URL(fileURLWithPath: jsonPath))
}
let day = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
try writeChart(results, title: "courier-benchmarks \(quick ? "--quick " : "")on \(day), peer: \(scenarios.peer.name)")
if check {
    let missed = results.filter { !$0.meetsTarget }
    for measurement in missed { print("target missed: \(Report.row(measurement))") }
    if !missed.isEmpty {
        scenarios.stop()  // exit skips the deferred stop, which would leave nginx running
        exit(1)
    }
}
