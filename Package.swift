// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .executable(name: "courier-demo", targets: ["CourierDemo"]),
    ],
    targets: [
        .target(name: "Courier"),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        .executableTarget(name: "CourierDemo", dependencies: ["Courier", "CourierTesting"]),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
