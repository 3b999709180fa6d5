import Appliance
import ArgumentParser
import Foundation

/// `venue-beacon identity`: the node's public signing key, for the contact tracers.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Print the node's public signing key (minisign format) and its fingerprint.",
        discussion: """
            Every export this node delivers carries a minisign signature made with the node's own \
            Ed25519 key (export.signing_key, created at the first start, mode 0600, never shown). \
            Standard output is the public key as a minisign .pub file: `venue-beacon identity > \
            node.pub`, then `minisign -Vm FILE -p node.pub`, or `minisign -Vm FILE -P KEY` with the \
            key's second line. The fingerprint (standard error) is short enough to read out over \
            the phone or print on the venue's registration form; the export emails name it too.
            """)

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let settings = try options.load()
        let key: NodeSigningKey
        let created: Bool
        do {
            (key, created) = try NodeSigningKey.loadOrCreate(at: settings.export.signingKey)
        } catch {
            Console.error(error.description)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        if created { Console.error("created the node's signing key \(settings.export.signingKey)") }
        let venue = settings.venue
        let text = "untrusted comment: venue-beacon node of \(venue.name) (\(venue.code)), fingerprint \(key.fingerprint)\n"
            + Minisign.publicKey(key) + "\n"
        Console.out(text)
        Console.error("fingerprint: \(key.fingerprint)")
    }
}
