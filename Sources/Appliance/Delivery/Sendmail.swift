import Foundation
import Glibc

/// Why the mail system did not take a message.
public struct HandOffError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Something that takes a finished message and returns once the mail system has accepted it.
/// Blocking: the outbox calls it on its own queue, never on the cooperative pool.
public protocol MailTransport: Sendable {
    func handOff(messageAt path: String) throws(HandOffError)
}

/// The system's sendmail interface (msmtp-mta on the image): `sendmail -t -i` with the message
/// on stdin. Exit status 0 after reading the whole message means accepted; anything else — a
/// program that stopped reading early (it cannot have sent what it never read), another
/// status, a missing program or a hang past `timeout` — is a failed hand-off whose reason
/// includes the program's stderr.
public struct SendmailTransport: MailTransport {
    public var program: String
    public var timeout: TimeInterval

    /// `-t`: recipients from the To header; `-i`: a line with a single dot is not the end.
    public static let arguments = ["-t", "-i"]

    public init(program: String, timeout: TimeInterval = 300) {
        self.program = program
        self.timeout = timeout
    }

    public func handOff(messageAt path: String) throws(HandOffError) {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw HandOffError("sendmail program \(program) does not exist or is not executable (install msmtp-mta, or set export.sendmail)")
        }
        let message = open(path, O_RDONLY | O_CLOEXEC)
        guard message >= 0 else { throw HandOffError("cannot read the message \(path): \(String(cString: strerror(errno)))") }
        defer { close(message) }

        let exit: ChildProcess.Exit
        let stderr: Data
        do {
            (exit, stderr) = try ChildProcess.run(program, Self.arguments, stdin: message, timeout: timeout)
        } catch {
            throw HandOffError("cannot start \(program): \(String(cString: strerror(error.code)))")
        }
        let said = String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let detail = said.isEmpty ? "" : ": " + said.split(separator: "\n").joined(separator: " / ")
        switch exit {
        case .status(0):
            // stdin is the message file itself: its offset, shared with the child, is how far
            // the program read.
            var info = stat()
            let read = lseek(message, 0, SEEK_CUR)
            guard fstat(message, &info) == 0, read >= info.st_size else {
                throw HandOffError("\(program) exited with status 0 having read only \(max(read, 0)) of the message's \(info.st_size) bytes: not sent\(detail)")
            }
            return
        case .status(let status): throw HandOffError("\(program) exited with status \(status)\(detail)")
        case .signal(let signal): throw HandOffError("\(program) was killed by signal \(signal)\(detail)")
        case .timedOut: throw HandOffError("\(program) did not finish within \(Int(timeout)) s and was stopped with its children\(detail)")
        }
    }
}
