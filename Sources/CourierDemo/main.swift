import Courier
import CourierTesting
import Foundation

// courier-demo: starts an embedded app backend on 127.0.0.1 and walks through the SDK against it.
do {
    let server = try DemoBackend.start()
    defer { server.stop() }
    let baseURL = server.baseURL.appendingPathComponent("api/v1/")
    print("Courier demo — backend listening on \(server.baseURL.absoluteString)")
    let transport = NetworkClient.Configuration.defaultTransport()
    #if os(Linux)
        let library = CurlTransport.libcurlVersion.map { " on \($0.split(separator: " ").first ?? "")" } ?? ""
    #else
        let library = ""
    #endif
    print("Transport: \(type(of: transport))\(library)")
    let client = NetworkClient(configuration: .init(baseURL: baseURL, timeout: .seconds(10), transport: transport))
    await Walkthrough(server: server, client: client).run()
} catch {
    print("The demo backend could not start: \(error)")
    exit(1)
}
