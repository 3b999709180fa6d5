import Crypto
import Foundation

/// Encrypts a stream to age X25519 recipients in the age v1 format (age-encryption.org/v1),
/// so `age -d -i KEY FILE` and every other age implementation open it.
///
///     let writer = try AgeWriter(recipients: keys) { ciphertext in try file.write(ciphertext) }
///     try writer.write(csvChunk) …
///     try writer.finish()
///
/// Memory stays bounded: the header goes out at once, then the payload as STREAM chunks of
/// 64 KiB of plaintext (ChaCha20-Poly1305, 11-byte big-endian counter, last-chunk flag), each
/// sent to `output` as soon as it is known not to be the last one.
///
/// The format, in short: a random 16-byte file key; per recipient an `X25519` stanza (an
/// ephemeral share, and the file key sealed with ChaCha20-Poly1305 under
/// HKDF-SHA256(shared secret, salt = share ‖ recipient, "age-encryption.org/v1/X25519"));
/// the header's HMAC-SHA256 under HKDF(file key, "", "header"); a 16-byte nonce; the payload
/// under HKDF(file key, nonce, "payload").
/// Why nothing was sealed.
public enum AgeWriterError: Error, Equatable, CustomStringConvertible {
    /// The recipient is a low-order point: the shared secret would be all zeros.
    case weakRecipient(AgeRecipient)

    public var description: String {
        switch self {
        case .weakRecipient(let key): "refusing to seal to \(key): it \(AgeKeyProblem.lowOrder)"
        }
    }
}

public final class AgeWriter {
    public static let chunkSize = 64 * 1024

    private let output: ([UInt8]) throws -> Void
    private let payloadKey: SymmetricKey
    private var buffer: [UInt8] = []
    private var counter: UInt64 = 0
    private var finished = false

    public init(recipients: [AgeRecipient], output: @escaping ([UInt8]) throws -> Void) throws {
        precondition(!recipients.isEmpty, "age needs at least one recipient")
        self.output = output
        let fileKey = SymmetricKey(size: .bits128)
        var header = "age-encryption.org/v1\n"
        for recipient in recipients {
            header += try Self.x25519Stanza(fileKey: fileKey, recipient: recipient)
        }
        header += "---"
        let macKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(header.utf8), using: macKey)
        header += " " + Self.base64(Array(mac)) + "\n"
        var nonce = [UInt8](repeating: 0, count: 16)
        var random = SystemRandomNumberGenerator()
        for i in nonce.indices { nonce[i] = UInt8.random(in: 0...255, using: &random) }
        payloadKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
        buffer.reserveCapacity(Self.chunkSize * 2)
        try output(Array(header.utf8) + nonce)
    }

    /// More plaintext.
    public func write(_ bytes: some Collection<UInt8>) throws {
        precondition(!finished)
        buffer.append(contentsOf: bytes)
        // A chunk goes out only once a byte after it is known: the last chunk is flagged.
        while buffer.count > Self.chunkSize {
            try seal(buffer[0..<Self.chunkSize], last: false)
            buffer.removeFirst(Self.chunkSize)
        }
    }

    /// The last chunk (empty only for an empty plaintext).
    public func finish() throws {
        precondition(!finished)
        finished = true
        try seal(buffer[...], last: true)
        buffer = []
    }

    private func seal(_ chunk: ArraySlice<UInt8>, last: Bool) throws {
        var nonce = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { nonce[3 + i] = UInt8(truncatingIfNeeded: counter >> (8 * (7 - UInt64(i)))) }
        nonce[11] = last ? 1 : 0
        counter += 1
        let box = try ChaChaPoly.seal(chunk, using: payloadKey, nonce: ChaChaPoly.Nonce(data: nonce))
        var out = [UInt8]()
        out.reserveCapacity(chunk.count + 16)
        out.append(contentsOf: box.ciphertext)
        out.append(contentsOf: box.tag)
        try output(out)
    }

    /// `-> X25519 SHARE\nBODY\n`
    static func x25519Stanza(fileKey: SymmetricKey, recipient: AgeRecipient) throws -> String {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let share = Array(ephemeral.publicKey.rawRepresentation)
        let shared: SharedSecret
        do {
            shared = try X25519.sharedSecret(ephemeral, recipient.publicKey)
        } catch is X25519.LowOrderPoint {
            // AgeRecipient.parse refuses such keys; this is the last line for one built otherwise.
            throw AgeWriterError.weakRecipient(recipient)
        }
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: share + recipient.publicKey, sharedInfo: Array("age-encryption.org/v1/X25519".utf8),
            outputByteCount: 32)
        let sealed = try ChaChaPoly.seal(fileKey.withUnsafeBytes { Array($0) }, using: wrapKey, nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)))
        let body = Array(sealed.ciphertext) + Array(sealed.tag)
        return "-> X25519 \(base64(share))\n" + wrapped(base64(body)) + "\n"
    }

    /// Stanza bodies: lines of 64 columns, the last one shorter (empty when the text fills its line).
    static func wrapped(_ text: String) -> String {
        let characters = Array(text)
        var lines: [String] = []
        var index = 0
        repeat {
            let end = min(index + 64, characters.count)
            lines.append(String(characters[index..<end]))
            index = end
        } while index < characters.count
        if lines.last?.count == 64 { lines.append("") }
        return lines.joined(separator: "\n")
    }

    /// Standard base64 without padding, as age writes it.
    static func base64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
