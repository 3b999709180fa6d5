// swift-tools-version: 6.0
// venue-beacon: a Raspberry Pi venue beacon and venue check-in appliance.
//
// Layers, bottom up, in the order of `targets` below (none uses a target listed after it; each a
// target a newcomer can read on its own):
//   BLEHost       pure LE host: H4, HCI, ACL, L2CAP, ATT, GATT, advertising data, link manager, btsnoop
//   BLETransport  ways to reach a controller: HCI user channel (Pi), H4 over a unix socket (btvirt);
//                 the host's thread (BluetoothHost), which reopens the controller with backoff
//   CivilDate     calendar dates from day counts (exports, sightings files, Herald logs)
//   Sightings     what a sighting carries that Herald and the diary both name: the payload kinds,
//                 a time-and-RSSI sample
//   Herald        Herald UUIDs, payloads, signal writes, advert classifier, sensor node, SensorEvent
//   VenueDiary    presence tracker, SQLite diary (GRDB), retention, export
//   VenueNode     the venue node's pure parts: identity over the air, the radio loop (NodeLoop; with
//                 the host engine, NodeCore), the diary loop (DiaryKeeper), sensor events into the
//                 diary (the node's, and `diary replay`'s rows turned into the same events)
//   Simulation    a venue of virtual phones: ground truth, radio model, efficacy against the diary
//   AirTransport  the simulated air as an HCITransport (run-bench only)
//   Replication   several nodes, one venue: wire format, sending state machine, hub store, merge
//   Exposure      published GAEN diagnosis keys matched against the diary
//   Appliance     settings, delivery, GPIO, systemd, service wiring
//   venue-beacon  the command line
import Foundation
import PackageDescription

let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let toml: Target.Dependency = .product(name: "TOMLKit", package: "TOMLKit")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")

// The libgpiod found at build time picks the GPIO backend (Sources/Appliance/GPIO): 1.x (bookworm)
// builds GPIOBackendV1, 2.x (trixie) GPIOBackendV2, whose API is incompatible. Asked of pkg-config,
// as the CGPIOD target is, so PKG_CONFIG_PATH (cross builds) counts; without pkg-config or an
// answer, 1.x.
let gpiodMajorVersion: Int = {
    let pkgConfig = Process()
    pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    pkgConfig.arguments = ["pkg-config", "--modversion", "libgpiod"]
    let output = Pipe()
    pkgConfig.standardOutput = output
    pkgConfig.standardError = FileHandle.nullDevice
    guard (try? pkgConfig.run()) != nil else { return 1 }
    let version = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    pkgConfig.waitUntilExit()
    guard pkgConfig.terminationStatus == 0 else { return 1 }
    return Int(version.prefix(while: { $0.isASCII && $0.isNumber })) ?? 1
}()
let gpiodSettings: [SwiftSetting] = gpiodMajorVersion >= 2 ? [.define("GPIOD_V2")] : []

let package = Package(
    name: "venue-beacon",
    products: [
        .executable(name: "venue-beacon", targets: ["venue-beacon"]),
        .library(name: "VenueDiary", targets: ["VenueDiary"]),
        .library(name: "BLEHost", targets: ["BLEHost"]),
        // For the benchmarks package.
        .library(name: "Herald", targets: ["Herald"]),
        .library(name: "VenueNode", targets: ["VenueNode"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "AirTransport", targets: ["AirTransport"]),
        .library(name: "Appliance", targets: ["Appliance"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(name: "BLEHost"),
        .target(name: "BLETransport", dependencies: ["BLEHost", "CBlueZ"]),
        .target(name: "CivilDate"),
        .target(name: "Sightings"),
        .target(name: "Herald", dependencies: ["BLEHost", "CivilDate", "Sightings"]),
        .target(name: "VenueDiary", dependencies: ["CivilDate", "Sightings", grdb]),
        .target(name: "VenueNode", dependencies: ["BLEHost", "Herald", "Sightings", "VenueDiary"]),
        .target(name: "Simulation", dependencies: ["BLEHost", "Herald", "Sightings", "VenueDiary", "VenueNode"]),
        // The simulated air as an HCITransport, for run-bench (Benchmarks/) only.
        .target(name: "AirTransport", dependencies: ["BLEHost", "BLETransport", "Simulation"]),
        // Several nodes, one venue: the wire format, the node's sending state machine, the hub's
        // store and the venue-wide merge (docs/venue.md). Pure: MQTT itself is in Appliance.
        .target(name: "Replication", dependencies: ["Sightings", "VenueDiary", grdb]),
        // Exposure Notification key files matched against the diary (docs/exposure.md).
        .target(name: "Exposure", dependencies: ["VenueDiary", "CivilDate", "CZlib", crypto]),
        .target(name: "Appliance", dependencies: ["BLEHost", "BLETransport", "Herald", "VenueDiary", "VenueNode", "Replication", "CGPIOD", "CMosquitto", logging, toml, crypto],
            swiftSettings: gpiodSettings),
        .executableTarget(
            name: "venue-beacon", dependencies: ["Appliance", "Exposure", "Herald", "Replication", "VenueDiary", "VenueNode", "BLEHost", "BLETransport", "Simulation", argumentParser, logging],
            linkerSettings: [
                // Release builds (what ships): LLVM's linker, which packs the ~90,000 relative
                // relocations of a position-independent executable into 17 KB (DT_RELR, glibc
                // ≥ 2.36; they took 2.2 MB that the loader reads at every start), and no dynamic
                // symbol table of our own symbols (1.4 MB the loader hashed through): 3.3 MB less
                // resident memory (BENCHMARKS.md, "run process").
                .unsafeFlags(
                    ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
                    .when(platforms: [.linux], configuration: .release))
            ]),

        .testTarget(name: "BLEHostTests", dependencies: ["BLEHost"]),
        .testTarget(name: "HeraldTests", dependencies: ["Herald", "BLEHost", "Sightings"]),
        .testTarget(name: "CivilDateTests", dependencies: ["CivilDate"]),
        .testTarget(name: "VenueDiaryTests", dependencies: ["VenueDiary", "Sightings", grdb]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "Herald", "Sightings", "VenueDiary", "VenueNode", "BLEHost"]),
        .testTarget(name: "AirTransportTests", dependencies: ["AirTransport", "Simulation", "Herald", "BLEHost", "BLETransport"]),
        .testTarget(name: "ExposureTests", dependencies: ["Exposure", "VenueDiary", crypto]),
        .testTarget(name: "VenueNodeTests", dependencies: ["VenueNode", "Herald", "Sightings", "VenueDiary", "BLEHost"]),
        .testTarget(name: "ReplicationTests", dependencies: ["Replication", "VenueDiary", "Sightings", grdb]),
        .testTarget(
            name: "ApplianceTests",
            dependencies: ["Appliance", "BLEHost", "BLETransport", "Herald", "Sightings", "VenueDiary", "VenueNode", crypto, logging]),
        .testTarget(name: "BLETransportTests", dependencies: ["BLETransport", "BLEHost"]),
        // Tests that drive real programs: the venue-beacon binary, btvirt, Bumble, msmtp.
        .testTarget(
            name: "IntegrationTests", dependencies: ["BLEHost", "BLETransport", "VenueDiary", "Appliance", grdb, logging],
            // Built or run by the harness itself: the btvirt AF_ALG shim (cc) and the Bumble peers (python3).
            exclude: ["Support/AFALGShim.c", "Bumble"]),
    ],
    swiftLanguageModes: [.v6]
)
