import Courier
import Foundation

extension Walkthrough {
    /// Step 12: a chat answer streamed as Server-Sent Events; the connection drops half-way and
    /// the stream resumes from the last event it read.
    func streams() async {
        heading("12. Streams: a chat answer token by token; the connection drops and resumes from Last-Event-ID")
        await step {
            var text = ""
            for try await event in client.events(.chatAnswer) {
                guard event.type != "done" else { break }
                text += event.data.text
                print("   event \(event.id ?? "-"): \(event.data.text)")
            }
            let resumed = server.requests.last { $0.path.hasSuffix("/chat") }?.headers["Last-Event-ID"]
            print(
                "   connections: \(server.requests.filter { $0.path.hasSuffix("/chat") }.count), the last sent Last-Event-ID \(resumed ?? "none")"
            )
            print("   answer: \(text.trimmingCharacters(in: .whitespaces))")
        }
    }
}

/// One piece of a chat answer.
struct ChatToken: Decodable, Sendable {
    let text: String
}

extension Endpoint where Response == ChatToken {
    /// The demo chat's answer, each event plain JSON; the last one, `[DONE]`, is of type `done`.
    static var chatAnswer: Self {
        .get(
            "chat",
            decoding: ResponseDecoding(checkingContentType: false) { response, decoder in
                let isDone = response.body == Data("[DONE]".utf8)
                return isDone ? ChatToken(text: "") : try decoder.decode(ChatToken.self, from: response.body)
            })
    }
}
