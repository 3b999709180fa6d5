import Foundation

/// minisign's formats (jedisct1/minisign), for the node's detached signatures: `minisign -Vm
/// FILE -P KEY` verifies them.
///
/// - A public key is base64 of `"Ed"` ‖ key ID (8 bytes) ‖ Ed25519 public key (32 bytes);
///   minisign prints the key ID as the hex of those 8 bytes read as a little-endian number.
/// - A signature file has four lines: an untrusted comment; base64 of `"ED"` ‖ key ID ‖ the
///   Ed25519 signature of the file's BLAKE2b-512 (the prehashed algorithm minisign uses by
///   default since 0.10; the legacy `"Ed"` signs the whole file, which would need it held in
///   memory); `trusted comment: …`; base64 of the signature of (first signature ‖ trusted
///   comment), so the trusted comment cannot be changed either.
public enum Minisign {
    /// `untrusted comment: minisign public key ID` and the key, as minisign writes `.pub` files.
    public static func publicKeyFile(_ key: NodeSigningKey) -> String {
        "untrusted comment: minisign public key \(key.minisignKeyID)\n\(publicKey(key))\n"
    }

    /// The base64 line `minisign -P` takes.
    public static func publicKey(_ key: NodeSigningKey) -> String {
        Data(Array("Ed".utf8) + key.keyID + key.publicKey).base64EncodedString()
    }

    /// A `.minisig` file for content whose BLAKE2b-512 is `hash`. Line breaks in the comments
    /// become spaces (each is one line of the file).
    public static func signature(hash: [UInt8], key: NodeSigningKey, trustedComment: String, untrustedComment: String) throws -> String {
        precondition(hash.count == 64)
        let trusted = oneLine(trustedComment)
        let signature = try key.sign(hash)
        let global = try key.sign(signature + Array(trusted.utf8))
        return "untrusted comment: \(oneLine(untrustedComment))\n"
            + Data(Array("ED".utf8) + key.keyID + signature).base64EncodedString() + "\n"
            + "trusted comment: \(trusted)\n"
            + Data(global).base64EncodedString() + "\n"
    }

    /// Control characters other than tab (minisign's own field separator) become spaces.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F ? " " : Character($0) })
    }
}
