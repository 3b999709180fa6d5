import Foundation
import Glibc

/// A real SMTP server for tests: aiosmtpd's Mailbox handler writing a Maildir, on 127.0.0.1.
/// `scripts/setup` pip-installs aiosmtpd into the `python3` on the PATH.
final class SMTPSink {
    let port: UInt16
    let maildir: String
    private var process: Process?

    init(port: UInt16, maildir: String) {
        self.port = port
        self.maildir = maildir
    }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The Mailbox handler creates the Maildir itself; it must not exist beforehand.
        process.arguments = ["python3", "-m", "aiosmtpd", "-n", "-l", "127.0.0.1:\(port)", "-c", "aiosmtpd.handlers.Mailbox", maildir]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        for _ in 0..<200 {
            if Self.accepts(port) { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        stop()
        throw SinkError(reason: "aiosmtpd did not start on port \(port) (is it installed? run scripts/setup)")
    }

    /// Stops the server (SIGKILL: children of test threads may have SIGTERM blocked).
    func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// The files of the messages delivered so far.
    func messageFiles() -> [String] {
        let new = (maildir as NSString).appendingPathComponent("new")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: new)) ?? []).sorted()
        return names.map { (new as NSString).appendingPathComponent($0) }
    }

    deinit { stop() }

    struct SinkError: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// A sendmail program for tests: msmtp with an rc file pointing at the sink on `port`.
func msmtpSendmail(in dir: TemporaryDirectory, port: UInt16) throws -> String {
    let rc = try dir.write("msmtprc", """
        account default
        host 127.0.0.1
        port \(port)
        auth off
        tls off
        from venue@example.org

        """)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: rc)
    let script = dir.path("sendmail")
    writeExecutable(script, "#!/bin/sh\nexec /usr/bin/msmtp -C \(rc) \"$@\"\n")
    return script
}

/// Writes an executable script, close-on-exec: a child spawned meanwhile by another test that
/// inherited a write descriptor would make exec'ing the script fail with ETXTBSY.
func writeExecutable(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// A delivered message taken apart by Python's standard `email` package (an independent MIME
/// parser): headers, the covering note and the attachment's name and exact bytes.
struct DeliveredEmail {
    var headers: [String: String]
    var body: String
    var attachmentName: String
    var attachment: Data
    /// Every attachment, in order: (file name, decoded bytes).
    var attachments: [(name: String, data: Data)]

    init(file: String, scratch: TemporaryDirectory) throws {
        let out = scratch.path("attachment-\(UUID().uuidString)")
        let script = """
            import sys, email, json
            from email import policy
            m = email.message_from_binary_file(open(sys.argv[1], 'rb'), policy=policy.default)
            parts = list(m.iter_attachments())
            assert len(parts) >= 1, len(parts)
            for i, part in enumerate(parts):
                open(sys.argv[2] + "." + str(i), 'wb').write(part.get_payload(decode=True))
            print(json.dumps({"headers": {k: str(v) for k, v in m.items()},
                              "body": m.get_body(('plain',)).get_content(),
                              "names": [p.get_filename() for p in parts],
                              "type": parts[0].get_content_type()}))
            """
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, file, out])
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw SMTPSink.SinkError(reason: "python could not parse \(file): \(result.output)")
        }
        headers = json["headers"] as? [String: String] ?? [:]
        body = json["body"] as? String ?? ""
        let names = json["names"] as? [String] ?? []
        attachments = names.enumerated().map { ($1, FileManager.default.contents(atPath: out + ".\($0)") ?? Data()) }
        attachmentName = names.first ?? ""
        attachment = attachments.first?.data ?? Data()
    }
}
