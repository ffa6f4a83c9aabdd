import Courier
import CourierTesting
import Foundation

extension Endpoint where Response == [Order] {
    static func orders(page: Int) -> Self { .get("orders", query: ["page": "\(page)"]) }
}

extension Endpoint where Response == Order {
    static func createOrder(_ order: NewOrder) -> Self { .post("orders", body: .json(order)) }
}

extension Endpoint where Response == [String: String] {
    static func search(_ text: String) -> Self { .get("search", query: ["q": text]) }
}

/// The demo's steps, each printing what happened.
struct Walkthrough {
    let server: LoopbackServer
    let client: NetworkClient

    func run() async {
        heading("1. A typed endpoint decoded from an envelope")
        await step {
            let orders = try await client.send(.orders(page: 1))
            print(
                "   GET orders?page=1 → \(orders.count) orders, first: \(orders[0].title), last: \(orders.last!.title)")
            // The payload with the answer around it: status, headers, the envelope's message.
            let page3 = try await client.reply(to: .orders(page: 3))
            print(
                "   GET orders?page=3 → \(page3.value.count) orders, status \(page3.response.status),"
                    + " message \"\(page3.message ?? "")\"")
        }

        heading("2. A JSON body, encoded once")
        await step {
            let created = try await client.send(.createOrder(NewOrder(title: "Green tea 🍵", price: 4.2)))
            print("   POST orders → created #\(created.id) \"\(created.title)\" at \(created.price)")
        }

        heading("3. Reserved characters survive the round trip")
        await step {
            let text = "a+b & c=d #1 100% 中文 😀"
            let echo = try await client.send(.search(text))
            print("   sent:     \(text)")
            print("   on wire:  ?\(echo["raw"] ?? "")")
            print("   received: \(echo["q"] ?? "")  (\(echo["q"] == text ? "identical" : "DIFFERENT"))")
        }

        heading("4. A business error (code 99: log in again)")
        await step { _ = try await client.send(Endpoint<EmptyResponse>.get("profile")) }

        heading("5. An HTTP error with an older backend's error body, decoded")
        await step { _ = try await client.send(Endpoint<EmptyResponse>.get("legacy")) }

        heading("6. A server that trickles bytes hits the overall deadline (1 s)")
        await step {
            let started = ContinuousClock.now
            defer {
                let elapsed = ContinuousClock.now - started
                print(
                    "   gave up after \(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) ms"
                )
            }
            _ = try await client.send(Endpoint<String>.get("report").timeout(.seconds(1)))
        }

        heading("7. Cancellation stops the transfer; the activity count shows requests in flight")
        await step {
            // Three requests of their own: identical GETs in flight would share one transfer.
            let endpoint = Endpoint<String>.get("slow").sharingIdenticalRequests(false)
            let slow = (0..<3).map { _ in Task { try await client.send(endpoint) } }
            _ = await server.waitForEvents {
                $0.filter { if case .received(_, "/api/v1/slow") = $0 { true } else { false } }.count == 3
            }
            print("   in flight: \(client.activeRequestCount)")
            client.cancelAll()
            for task in slow {
                do { _ = try await task.value } catch let error as NetworkError { print("   → \(error.code)") }
            }
            _ = await server.waitForEvents {
                $0.filter { if case .clientClosedEarly = $0 { true } else { false } }.count == 3
            }
            print("   in flight: \(client.activeRequestCount); the server saw 3 connections close early")
        }
        await appBackend()
        await offline()
        await transfers()
        await caching()
        await streams()
        await pages()
        await recording()
        await observing()
        print("\nDone. The server received \(server.requests.count) requests.")
    }

    func heading(_ text: String) {
        print("\n\(text)")
    }

    /// Runs a step and prints its error the way an app would log it.
    func step(_ body: () async throws -> Void) async {
        do {
            try await body()
        } catch let error as NetworkError {
            print("   ✗ \(error.code): \(error.message)")
            if let code = error.businessCode {
                print("     business code \(code), message: \(error.businessMessage ?? "-")")
            }
            if let text = error.userMessage { print("     show the user: \(text)") }
            if let status = error.status { print("     HTTP status \(status)") }
        } catch {
            print("   ✗ unexpected: \(error)")
        }
    }
}
