import Foundation

/// An SVG chart of a run, written by hand (no dependency): one bar per row, its length the
/// row's ratio against its baseline (1 = as fast or as small as the baseline), a tick at the
/// target where the target is a ratio, green when the target is met, red when it is missed,
/// grey for rows without a target.
enum Chart {
    private static let labelWidth = 150.0
    private static let barWidth = 560.0
    private static let valueWidth = 70.0
    private static let rowHeight = 18.0
    private static let top = 46.0

    /// The chart of `results`, titled `title`.
    static func svg(_ results: [Measurement], title: String) -> String {
        // Ratios far above 1 (URLSession rows) would squeeze the rest: the scale ends at 6.
        let highest = results.map { max(drawn($0) ?? 0, targetRatio(of: $0) ?? 0) }.max() ?? 1
        let scale = min(6, max(1, highest.rounded(.up)))
        let width = labelWidth + barWidth + valueWidth
        let height = top + Double(results.count) * rowHeight + 30
        func x(_ ratio: Double) -> Double { labelWidth + min(ratio, scale) / scale * barWidth }
        var parts: [String] = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" "#
                + #"font-family="sans-serif" font-size="11">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="8" y="18" font-size="13" font-weight="bold">\#(escape(title))</text>"#,
            #"<text x="8" y="34" fill="dimgray">ratio against the baseline of each row; tick: target; "#
                + #"green: met, red: missed, grey: no target</text>"#,
        ]
        // Grid lines at each whole ratio, 1 (the baseline) darker.
        for step in 0...Int(scale) {
            let position = x(Double(step))
            parts.append(
                #"<line x1="\#(position)" y1="\#(top - 4)" x2="\#(position)" y2="\#(height - 24)" "#
                    + #"stroke="\#(step == 1 ? "#888" : "#ddd")"/>"#)
            parts.append(#"<text x="\#(position)" y="\#(height - 10)" text-anchor="middle">\#(step)</text>"#)
        }
        for (index, row) in results.enumerated() {
            let y = top + Double(index) * rowHeight
            let colour = row.target == nil ? "#999" : row.meetsTarget ? "#2e7d32" : "#c62828"
            parts.append(
                #"<text x="\#(labelWidth - 6)" y="\#(y + 12)" text-anchor="end">\#(escape(row.scenario))</text>"#)
            let ratio = drawn(row) ?? 0
            parts.append(
                #"<rect x="\#(labelWidth)" y="\#(y + 3)" width="\#(x(ratio) - labelWidth)" height="\#(rowHeight - 6)" "#
                    + #"fill="\#(colour)"><title>\#(escape(row.detail))</title></rect>"#)
            if let target = targetRatio(of: row) {
                parts.append(
                    #"<line x1="\#(x(target))" y1="\#(y + 1)" x2="\#(x(target))" y2="\#(y + rowHeight - 1)" "#
                        + #"stroke="black" stroke-width="2"/>"#)
            }
            let value = drawn(row).map { String(format: "%.2f", $0) + ($0 > scale ? " →" : "") } ?? "n/a"
            parts.append(#"<text x="\#(labelWidth + barWidth + 6)" y="\#(y + 12)">\#(value)</text>"#)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    /// The row's ratio, when it is one to draw: finite, not negative, and against a baseline
    /// (the soak's rows have none).
    private static func drawn(_ row: Measurement) -> Double? {
        row.ratio.isFinite && row.ratio >= 0 && row.baseline != 0 ? row.ratio : nil
    }

    /// The lowest ratio that meets the row's target, when the target is a ratio (`≥ 0.98`).
    private static func targetRatio(of row: Measurement) -> Double? {
        guard let target = row.target, target.hasPrefix("≥ ") else { return nil }
        return Double(target.dropFirst(2))
    }

    /// Text as XML takes it: markup escaped, control characters (which XML forbids) dropped.
    private static func escape(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\t" || $0 == "\n" }).replacingOccurrences(
            of: "&", with: "&amp;"
        ).replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
