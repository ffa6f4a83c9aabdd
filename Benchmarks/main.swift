// courier-benchmarks: Courier side by side with raw URLSession in one run.
//
//   swift run -c release courier-benchmarks [--quick] [--json PATH] [--check]
//
// The peer server is CourierTesting's LoopbackServer on 127.0.0.1 (nginx support is still to
// come). Each scenario runs Courier and its baseline interleaved after a warm-up and reports the
// medians and their ratio.
import Courier
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let check = arguments.contains("--check")
let jsonPath = arguments.firstIndex(of: "--json").flatMap {
    arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
}

let scenarios = try Scenarios(quick: quick)
defer { scenarios.stop() }
var results: [Measurement] = []
for run in [scenarios.s1Sequential, scenarios.s2Concurrent, scenarios.s5EnvelopeDecode, scenarios.s6Signing] {
    let measurement = try await run()
    results.append(measurement)
    print(Report.row(measurement))
}
print(Report.table(results, quick: quick))
if let jsonPath {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(results).write(to: URL(fileURLWithPath: jsonPath))
}
if check, let missed = results.first(where: { !$0.meetsTarget }) {
    print("target missed: \(missed.scenario) ratio \(String(format: "%.3f", missed.ratio)) < \(missed.target ?? 0)")
    exit(1)
}
