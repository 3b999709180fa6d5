import Foundation

/// How exports leave this node: sealed to the contact tracers' age keys (when any are
/// configured) and signed with the node's key.
public struct ExportSealing: Sendable {
    /// `export.recipients`; empty: the export stays plaintext.
    public var recipients: [AgeRecipient]
    /// The node's key; nil only for `export --output` run by someone who cannot read it.
    public var key: NodeSigningKey?

    public init(recipients: [AgeRecipient], key: NodeSigningKey?) {
        self.recipients = recipients
        self.key = key
    }

    public var sealed: Bool { !recipients.isEmpty }

    /// The configured recipients and the node's key (created at its first use).
    public static func load(_ settings: ExportSettings) throws(NodeKeyError) -> ExportSealing {
        ExportSealing(recipients: settings.ageRecipients, key: try NodeSigningKey.loadOrCreate(at: settings.signingKey).key)
    }
}

/// One export on its way out: plaintext in, in chunks; out, in chunks, the bytes delivered
/// (the age file when sealed, else the plaintext), hashed as they pass for the node's minisign
/// signature. Nothing is held beyond one 64 KiB chunk.
public final class ExportSealer {
    /// The far end: delivers and hashes.
    private final class Out {
        let output: ([UInt8]) throws -> Void
        var hash = BLAKE2b()
        var count = 0
        init(_ output: @escaping ([UInt8]) throws -> Void) { self.output = output }
        func pass(_ bytes: [UInt8]) throws {
            try output(bytes)
            hash.update(bytes)
            count += bytes.count
        }
    }

    private let sealing: ExportSealing
    private let age: AgeWriter?
    private let out: Out

    /// Bytes delivered so far.
    public var bytesOut: Int { out.count }

    public init(sealing: ExportSealing, output: @escaping ([UInt8]) throws -> Void) throws {
        self.sealing = sealing
        let out = Out(output)
        self.out = out
        age = sealing.sealed ? try AgeWriter(recipients: sealing.recipients) { try out.pass($0) } : nil
    }

    public func write(_ plaintext: [UInt8]) throws {
        if let age { try age.write(plaintext) } else { try out.pass(plaintext) }
    }

    /// Ends the stream; returns the `.minisig` text for what was delivered (nil without a key).
    public func finish(trustedComment: String, untrustedComment: String) throws -> String? {
        try age?.finish()
        guard let key = sealing.key else { return nil }
        return try Minisign.signature(hash: out.hash.finalize(), key: key, trustedComment: trustedComment, untrustedComment: untrustedComment)
    }
}
