import Courier
import Foundation

extension Scenarios {
    /// S12: what logging with details costs: redacting a 16 KB JSON body against parsing it once
    /// with JSONSerialization, and a 2 KB URL, each within a budget; and a 1 MB body costs per
    /// byte what the 16 KB one does (linear work).
    func s12Redaction() async throws -> [Measurement] {
        let redactor = Redactor.standard
        let json = Self.jsonBody(bytes: 16 << 10)
        let big = Self.jsonBody(bytes: 1 << 20)
        var query = (0..<40).map { "param\($0)=value%20\($0)" }
        query += ["access_token=T0k3n", "next=https%3A%2F%2Fapp.example%2Fcb%3Fsign%3Dff00%26page%3D2"]
        let url = "https://ann:pw@api.example.com/v1/orders?" + query.joined(separator: "&")
        let url2K = url + "&pad=" + String(repeating: "x", count: max(0, 2_048 - url.utf8.count - 5))
        // A failure shows here, not as a fast loop.
        precondition(!redactor.redact(body: json, contentType: "application/json").contains("S3cr3t"))
        precondition(!redactor.redact(url: url2K).contains("T0k3n"))

        let rounds = quick ? 50 : 400
        func microseconds(_ count: Int, _ work: @escaping @Sendable () -> Void) async -> Double {
            await Harness.seconds { for _ in 0..<count { work() } } / Double(count) * 1e6
        }
        let (redacting, parsing) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: { _ = redactor.redact(body: json, contentType: "application/json") },
            courier: {
                await microseconds(rounds) { _ = redactor.redact(body: json, contentType: "application/json") }
            },
            baseline: { await microseconds(rounds) { _ = try? JSONSerialization.jsonObject(with: json) } })
        let urls = try await Harness.interleaved(
            repetitions: repetitions, warmUp: { _ = redactor.redact(url: url2K) },
            runs: [{ await microseconds(rounds * 4) { _ = redactor.redact(url: url2K) } }])
        let (small, large) = try await Harness.interleaved(
            repetitions: quick ? 3 : 7, warmUp: { _ = redactor.redact(body: big, contentType: "application/json") },
            courier: {
                await microseconds(rounds) { _ = redactor.redact(body: json, contentType: "application/json") }
                    / Double(json.count) * 1_000
            },
            baseline: {
                await microseconds(2) { _ = redactor.redact(body: big, contentType: "application/json") }
                    / Double(big.count) * 1_000
            })
        return [
            .ratio(
                "S12", "redact a \(json.count / 1024) KB JSON body (\(Report.format(redacting)) µs) vs parse it once",
                unit: "µs", courier: redacting, baseline: parsing, higherIsBetter: false, minimum: nil),
            .budget("S12j", "redact a \(json.count / 1024) KB JSON body", unit: "µs", value: redacting, maximum: 1_000),
            .budget("S12u", "redact a \(url2K.utf8.count) B URL", unit: "µs", value: urls[0], maximum: 200),
            .ratio(
                "S12l", "redaction cost per byte: \(big.count >> 20) MB body vs \(json.count / 1024) KB (linear)",
                unit: "ns/B", courier: large, baseline: small, higherIsBetter: false, minimum: 0.5),
        ]
    }

    /// A JSON body of about `bytes` bytes, as a backend sends it: an envelope of orders whose
    /// fields hold a token, a URL with a signature, a nested JSON string and plain values.
    static func jsonBody(bytes: Int) -> Data {
        var items: [String] = []
        var size = 0
        var index = 0
        while size < bytes {
            let item =
                #"{"id":\#(index),"title":"Order \#(index) of a longer title","token":"S3cr3t\#(index)","#
                + #""link":"https:\/\/cdn.example.com\/o\/\#(index)?sign=ff\#(index)&w=200","#
                + #""meta":"{\"note\":\"ok\",\"password\":\"S3cr3t\"}","tags":["a","b"],"price":9.99}"#
            items.append(item)
            size += item.utf8.count + 1
            index += 1
        }
        return Data((#"{"code":0,"msg":"ok","data":["# + items.joined(separator: ",") + "]}").utf8)
    }
}
