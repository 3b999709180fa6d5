import Foundation

/// The command line.
struct Options {
    static let usage = """
        usage: advert-bench [CAPTURE.btsnoop ...] [--stream distinct|repeats ...] [--reports N] [--devices N]
                            [--stages STAGE,...] [--runs N] [--no-peer] [--python PATH] [--json]
          CAPTURE          a btsnoop capture (datalink 1002, H4), e.g. from capture-gen
          --stream         an in-memory stream of the simulation's devices (default without a capture: both)
          --reports N      reports per in-memory stream (1,000,000)
          --devices N      devices of the in-memory streams (500)
          --stages         \(Stage.allCases.map(\.rawValue).joined(separator: ",")) (default: all; capture needs a capture file)
          --runs N         timed runs of each stage, and passes of the peer (5); also --passes N
          --no-peer        without the peer (bluetooth-data-tools via Benchmarks/peer/bdt_peer.py)
          --python PATH    the Python that runs the peer, with bluetooth-data-tools installed (python3)
          --json           one JSON object per stage and source, nothing else
        """

    enum Source {
        case capture(String)
        case stream(String)
    }

    var sources: [Source] = []
    var reports = 1_000_000
    var devices = 500
    var stages: [Stage]?
    var runs = 5
    var peer = true
    var python = "python3"
    var json = false

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { Self.fail("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        func number() -> Int {
            let text = value()
            guard let n = Int(text), n > 0 else { Self.fail("\(arguments[i - 1]) \(text): not a positive number") }
            return n
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--stream":
                let name = value()
                guard SimulatedStream.names.contains(name) else { Self.fail("unknown stream \(name)") }
                sources.append(.stream(name))
            case "--reports": reports = number()
            case "--devices": devices = number()
            case "--stages":
                stages = value().split(separator: ",").map { name in
                    guard let stage = Stage(rawValue: String(name)) else { Self.fail("unknown stage \(name)") }
                    return stage
                }
            case "--runs", "--passes": runs = number()
            case "--no-peer": peer = false
            case "--python": python = value()
            case "--json": json = true
            case "-h", "--help":
                print(Self.usage)
                exit(0)
            case let argument where argument.hasPrefix("-"): Self.fail("unknown argument \(argument)")
            case let path: sources.append(.capture(path))
            }
            i += 1
        }
        if sources.isEmpty { sources = SimulatedStream.names.map { .stream($0) } }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("advert-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
