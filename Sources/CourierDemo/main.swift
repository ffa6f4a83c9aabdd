import Courier
import CourierTesting
import Foundation

// courier-demo: starts an embedded app backend on 127.0.0.1 and walks through the SDK against it.
do {
    let server = try DemoBackend.start()
    defer { server.stop() }
    let baseURL = server.baseURL.appendingPathComponent("api/v1/")
    print("Courier demo — backend listening on \(server.baseURL.absoluteString)")
    let client = NetworkClient(configuration: .init(baseURL: baseURL, timeout: .seconds(10)))
    await Walkthrough(server: server, client: client).run()
} catch {
    print("The demo backend could not start: \(error)")
    exit(1)
}
