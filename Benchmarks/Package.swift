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
            dependencies: [.product(name: "VenueDiary", package: "venue-beacon"), .product(name: "VenueNode", package: "venue-beacon")]),
        .executableTarget(
            name: "air-bench",
            dependencies: [.product(name: "BLEHost", package: "venue-beacon"), .product(name: "Simulation", package: "venue-beacon")]),
        // Deterministic advertising corpus and captures (shared by the advert benchmarks).
        .target(name: "AdvertCorpus", dependencies: [.product(name: "BLEHost", package: "venue-beacon")]),
        .executableTarget(name: "capture-gen", dependencies: ["AdvertCorpus"]),
        // Advertising reports per second (issue 3's decode, issue 6's pipeline) from a capture or
        // an in-memory stream, beside the peer (Benchmarks/peer/bdt_peer.py).
        .executableTarget(
            name: "advert-bench",
            dependencies: [
                "AdvertCorpus", .product(name: "BLEHost", package: "venue-beacon"), .product(name: "Herald", package: "venue-beacon"),
                .product(name: "VenueDiary", package: "venue-beacon"), .product(name: "VenueNode", package: "venue-beacon"),
                .product(name: "Simulation", package: "venue-beacon"),
            ]),
        .executableTarget(
            name: "link-memory", dependencies: ["AdvertCorpus", "HeapStats", .product(name: "BLEHost", package: "venue-beacon")]),
        // glibc's mallinfo2 (not in Swift's Glibc module).
        .target(name: "HeapStats"),
        .executableTarget(
            name: "disk-bench",
            dependencies: [
                "AdvertCorpus", .product(name: "Herald", package: "venue-beacon"), .product(name: "VenueDiary", package: "venue-beacon"),
            ]),
        .executableTarget(
            name: "crowd-bench",
            dependencies: [.product(name: "Simulation", package: "venue-beacon"), .product(name: "VenueDiary", package: "venue-beacon"), .product(name: "VenueNode", package: "venue-beacon")]),
        // Sealing (age) and signing (minisign) an export beside the plain export (issue 17).
        .executableTarget(
            name: "seal-bench",
            dependencies: [.product(name: "Appliance", package: "venue-beacon"), .product(name: "VenueDiary", package: "venue-beacon")]),
        // The real `venue-beacon run` process against the simulated air served on a unix socket.
        .executableTarget(
            name: "run-bench",
            dependencies: [
                .product(name: "AirTransport", package: "venue-beacon"), .product(name: "BLEHost", package: "venue-beacon"),
                .product(name: "Simulation", package: "venue-beacon"), .product(name: "VenueDiary", package: "venue-beacon"),
            ]),
        // The venue hub (issue 23): visit batches, node diaries and a node's replication in-process,
        // for Benchmarks/hub/run (which drives mosquitto and the real `venue-beacon hub`).
        .executableTarget(
            name: "hub-bench",
            dependencies: [.product(name: "Appliance", package: "venue-beacon"), .product(name: "VenueDiary", package: "venue-beacon")]),
    ],
    swiftLanguageModes: [.v6]
)
