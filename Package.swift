// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .executable(name: "courier-demo", targets: ["CourierDemo"]),
        .executable(name: "courier-benchmarks", targets: ["CourierBenchmarks"]),
        .executable(name: "courier-fuzz", targets: ["CourierFuzz"]),
    ],
    targets: [
        // Linux reachability: the rtnetlink headers Glibc's Swift module does not expose.
        .target(name: "CNetlink"),
        // Linux CurlTransport: libcurl.so.4 loaded at run time, declared by hand (no -dev package).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(
            name: "Courier",
            dependencies: [
                .target(name: "CNetlink", condition: .when(platforms: [.linux])),
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
            ],
            // What Courier collects (nothing) and which required-reason APIs it calls, for apps'
            // privacy reports on Apple platforms.
            resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        .executableTarget(name: "CourierDemo", dependencies: ["Courier", "CourierTesting"]),
        // The benchmark's limit: plain C loops on the same libcurl, loaded the same way.
        .target(name: "CCurlBaseline", dependencies: [.target(name: "CCurl", condition: .when(platforms: [.linux]))]),
        .executableTarget(
            name: "CourierBenchmarks",
            dependencies: [
                "Courier", "CourierTesting",
                .target(name: "CCurlBaseline", condition: .when(platforms: [.linux])),
            ],
            path: "Benchmarks"),
        // Fuzz targets for every parser of untrusted bytes (scripts/fuzz); libFuzzer's driver is
        // linked only in a -sanitize=fuzzer build, and an ordinary build replays inputs.
        .target(name: "CFuzzDriver", path: "Fuzz/Driver"),
        .executableTarget(
            name: "CourierFuzz",
            dependencies: [
                "Courier", "CourierTesting", "CFuzzDriver",
                .target(name: "CNetlink", condition: .when(platforms: [.linux])),
            ],
            path: "Fuzz/Targets"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
