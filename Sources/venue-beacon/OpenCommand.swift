import Appliance
import ArgumentParser
import Foundation
import Glibc

/// `venue-beacon open`: decrypts an age file with an age identity, as `age -d -i` does.
struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Decrypt a sealed export (age) with an age identity file, as `age -d -i KEY FILE` does.",
        discussion: """
            For a tracer or a test without the age program: KEY is an identity file as age-keygen \
            writes it (lines starting with # are comments; LF or CRLF). The node never holds the \
            tracers' keys; use this on the tracers' machine. Exit 65 when no identity matches, or \
            the file is damaged or truncated. With -o FILE nothing is written then (the file \
            appears only when all of it is authenticated). To standard output, plaintext goes \
            out chunk by chunk (64 KiB), each only once authenticated, so a failure part way \
            leaves the chunks before it written, as with age: the error says how many bytes; \
            use -o for all or nothing.
            """)

    @Argument(help: ArgumentHelp("The sealed file (.age).", valueName: "file")) var file: String
    @Option(name: [.short, .customLong("identity")], help: ArgumentHelp("The age identity file.", valueName: "key"))
    var identity: String
    @Option(name: [.short, .long], help: ArgumentHelp("Write the plaintext here (default: standard output).", valueName: "path"))
    var output: String = "-"

    func run() throws {
        guard let keyText = try? String(contentsOfFile: identity, encoding: .utf8) else {
            Console.error("cannot read the identity file \(identity)")
            throw ExitCode(ExitStatus.noInput)
        }
        // Lines split on any line ending: "\r\n" is one Character, not a "\n".
        let identities = keyText.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }.compactMap { try? AgeIdentity.parse($0).get() }
        guard !identities.isEmpty else {
            Console.error("\(identity) holds no age identity (AGE-SECRET-KEY-1…)")
            throw ExitCode(ExitStatus.dataError)
        }
        var lastProblem: AgeReader.Problem = .noMatchingIdentity
        var written = 0
        for candidate in identities {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                Console.error("cannot read \(file)")
                throw ExitCode(ExitStatus.noInput)
            }
            defer { try? handle.close() }
            let out = try reportingFailures {
                try OutputFile(output, protecting: [ProtectedFile(file, role: "the sealed file"), ProtectedFile(identity, role: "the identity file")])
            }
            do {
                // Chunks are passed on only once authenticated; a later failure abandons the file.
                try AgeReader.open(identity: candidate, read: { Array(handle.readData(ofLength: $0)) }) { chunk in
                    try out.write(chunk)
                    written += chunk.count
                }
                try reportingFailures { try out.commit() }
                return
            } catch let problem as AgeReader.Problem {
                out.abandon()
                lastProblem = problem
                if problem != .noMatchingIdentity { break }
            } catch {
                out.abandon()
                throw error
            }
        }
        Console.error("\(file): \(lastProblem)")
        if output == "-" && written > 0 {
            Console.error("the \(written) bytes already on standard output were authenticated, but the rest is missing: do not use them as the whole file")
        } else if output != "-" {
            Console.error("nothing was written to \(output)")
        }
        throw ExitCode(ExitStatus.dataError)
    }
}
