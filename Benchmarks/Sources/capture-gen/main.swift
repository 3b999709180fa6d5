// capture-gen: writes a deterministic btsnoop capture of LE advertising reports (see
// CaptureGenerator): a venue's devices repeating their adverts, or the same stream with every
// report's AD bytes made unique.
//
// Usage: capture-gen --stream realistic|distinct --output PATH [--reports N] [--devices N]
//                    [--seconds S (reports / 1,667)] [--seed S]
import AdvertCorpus
import Foundation

guard let name = option("--stream"), let stream = CaptureGenerator.Stream(rawValue: name), let output = option("--output") else {
    FileHandle.standardError.write(Data("usage: capture-gen --stream realistic|distinct --output PATH [--reports N] [--devices N] [--seconds S] [--seed S]\n".utf8))
    exit(2)
}
// By default a capture holds 1,667 reports per venue second (500 devices, ~3.3 adverts each per
// second), whatever its length: the node's once-a-second tick then costs the same per report.
let reports = option("--reports", default: 1_000_000)
let generator = CaptureGenerator(
    stream: stream, devices: option("--devices", default: 500), reports: reports,
    seconds: Double(option("--seconds", default: max(1, reports * 600 / 1_000_000))), seed: UInt64(option("--seed", default: 1)))
let bytes = generator.capture()
guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
    FileHandle.standardError.write(Data("capture-gen: cannot write \(output)\n".utf8))
    exit(1)
}
print("capture-gen: \(output): \(stream.rawValue), \(grouped(generator.reports)) reports from \(generator.devices.count) devices over \(Int(generator.seconds)) s, \(grouped(bytes.count)) bytes")
