// swift-tools-version: 6.1
// Benchmarks for venue-beacon (not tests): build and run in release, e.g.
//   swift run -c release --package-path Benchmarks diary-bench
import PackageDescription

let package = Package(
    name: "venue-beacon-benchmarks",
    dependencies: [
        .package(name: "venue-beacon", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "diary-bench",
            dependencies: [.product(name: "VenueDiary", package: "venue-beacon")]),
        .executableTarget(
            name: "advert-bench",
            dependencies: [
                .product(name: "BLEHost", package: "venue-beacon"), .product(name: "Herald", package: "venue-beacon"),
                .product(name: "VenueDiary", package: "venue-beacon"), .product(name: "VenueNode", package: "venue-beacon"),
                .product(name: "Simulation", package: "venue-beacon"),
            ],
            exclude: ["peer.py"]),
        .executableTarget(
            name: "air-bench",
            dependencies: [.product(name: "BLEHost", package: "venue-beacon"), .product(name: "Simulation", package: "venue-beacon")]),
    ],
    swiftLanguageModes: [.v6]
)
