import Foundation

/// Formats measurements for the terminal and for the table in the Performance article.
enum Report {
    static func row(_ m: Measurement) -> String {
        "\(m.scenario): Courier \(format(m.courier)) vs \(format(m.baseline)) \(m.unit) → ratio \(String(format: "%.3f", m.ratio))"
            + (m.target.map { " (target \($0), \(m.meetsTarget ? "met" : "MISSED"))" } ?? "")
    }

    static func table(_ results: [Measurement], quick: Bool, peer: String) -> String {
        var lines = [
            "", "peer: \(peer)", "",
            "| scenario | what | Courier | baseline | unit | ratio | target |", "|---|---|---|---|---|---|---|",
        ]
        for m in results {
            let target = m.target.map { "\($0) \(m.meetsTarget ? "✓" : "✗")" } ?? "—"
            lines.append(
                "| \(m.scenario) | \(m.detail) | \(format(m.courier)) | \(format(m.baseline)) | \(m.unit) | \(String(format: "%.3f", m.ratio)) | \(target) |"
            )
        }
        if quick { lines.append("(--quick: short runs, for CI; ratios are noisy)") }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }
}
