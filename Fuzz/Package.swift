// swift-tools-version: 6.1
// libFuzzer targets for the parsers that take bytes from the air or a controller. Built and run
// by scripts/fuzz (with -sanitize=fuzzer,address -parse-as-library); see docs/fuzzing.md.
//
// To add a target: create Sources/<Name>/<Name>.swift (copy FuzzAdvertisingData), add <Name>
// to `fuzzers` below and, optionally, seed inputs in Corpus/<Name>/. scripts/fuzz runs every
// target listed here.
import PackageDescription

let fuzzers = ["FuzzHCIEvent", "FuzzAdvertisingData", "FuzzL2CAP", "FuzzATT"]

let package = Package(
    name: "venue-beacon-fuzz",
    dependencies: [.package(name: "venue-beacon", path: "..")],
    targets: [
        // Declares libFuzzer's LLVMFuzzerRunDriver for the targets' entry points.
        .target(name: "FuzzDriver")
    ]
        + fuzzers.map { name in
            .executableTarget(
                name: name,
                dependencies: ["FuzzDriver", .product(name: "BLEHost", package: "venue-beacon")])
        },
    swiftLanguageModes: [.v6]
)
