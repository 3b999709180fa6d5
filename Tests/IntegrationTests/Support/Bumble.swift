import Foundation

/// Google's Bumble host (PyPI `bumble`, installed by scripts/setup) as an independent peer: the
/// scripts in `Tests/IntegrationTests/Bumble/` open the emulator as `unix:/tmp/bt-server-le`.
enum Bumble {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Bumble")

    /// Starts `script` with the transport spec first, then `arguments`.
    static func start(_ script: String, transport: String, _ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess(
            python3, ["-u", scripts.appendingPathComponent(script).path, transport] + arguments,
            environment: ["PYTHONDONTWRITEBYTECODE": "1"])
    }

    /// The `python3` on PATH (the one scripts/setup installed Bumble into).
    static let python3: String = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/python3"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return "/usr/bin/python3"
    }()
}
