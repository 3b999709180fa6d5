import Crypto
import Foundation

/// Opens age v1 files sealed to an X25519 identity (`venue-beacon open`, and tests that read
/// what `age -r` wrote). Streams: the header, then one 64 KiB STREAM chunk at a time to
/// `output`; a wrong key, a changed header, a changed, reordered or missing chunk each throw
/// before the chunk's plaintext is passed on.
public enum AgeReader {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notAgeFile, malformedHeader, noMatchingIdentity, headerMACMismatch, damagedPayload, truncated

        public var description: String {
            switch self {
            case .notAgeFile: "not an age file (age-encryption.org/v1)"
            case .malformedHeader: "the age header is malformed"
            case .noMatchingIdentity: "no identity matched any of the recipients (sealed to other keys)"
            case .headerMACMismatch: "the header's MAC does not match (changed, or not for this key)"
            case .damagedPayload: "the payload failed authentication (changed, damaged, or cut short inside a chunk)"
            case .truncated: "the file ends early (truncated: the chunks there are intact, the rest is missing)"
            }
        }
    }

    /// Decrypts `input` (read in pieces by `read(max)`, returning [] at the end) to `output`.
    public static func open(
        identity: AgeIdentity, read: (Int) throws -> [UInt8], output: ([UInt8]) throws -> Void
    ) throws {
        var pending: [UInt8] = []
        var ended = false
        func fill(_ count: Int) throws {
            while pending.count < count && !ended {
                let more = try read(max(count - pending.count, 64 * 1024))
                if more.isEmpty { ended = true } else { pending += more }
            }
        }
        func line() throws -> String {
            var index = 0
            while true {
                if index >= pending.count {
                    try fill(pending.count + 256)
                    guard index < pending.count else { throw Problem.malformedHeader }
                }
                if pending[index] == 0x0A { break }
                index += 1
                guard index < 4096 else { throw Problem.malformedHeader }
            }
            let text = String(decoding: pending[..<index], as: UTF8.self)
            pending.removeFirst(index + 1)
            return text
        }
        guard try line() == "age-encryption.org/v1" else { throw Problem.notAgeFile }
        var headerText = "age-encryption.org/v1\n"
        var fileKey: SymmetricKey?
        var macLine = ""
        var next = try line()
        while true {
            if next.hasPrefix("---") {
                macLine = next
                break
            }
            guard next.hasPrefix("-> ") else { throw Problem.malformedHeader }
            let arguments = next.dropFirst(3).split(separator: " ").map(String.init)
            headerText += next + "\n"
            var body = ""
            while true {
                let part = try line()
                headerText += part + "\n"
                body += part
                if part.count < 64 { break }
            }
            if fileKey == nil, arguments.count == 2, arguments[0] == "X25519" {
                fileKey = try? unwrap(share: arguments[1], body: body, identity: identity)
            }
            next = try line()
        }
        guard macLine.hasPrefix("--- ") else { throw Problem.malformedHeader }
        guard let fileKey else { throw Problem.noMatchingIdentity }
        headerText += "---"
        let macKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
        guard let mac = decode64(String(macLine.dropFirst(4))),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(headerText.utf8), using: macKey)
        else { throw Problem.headerMACMismatch }
        try fill(16)
        guard pending.count >= 16 else { throw Problem.truncated }
        let nonce = Array(pending.prefix(16))
        pending.removeFirst(16)
        let payloadKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
        let sealedChunk = AgeWriter.chunkSize + 16
        var counter: UInt64 = 0
        while true {
            try fill(sealedChunk + 1)
            guard pending.count >= 16 else { throw Problem.truncated }
            let last = pending.count <= sealedChunk
            let chunk = Array(pending.prefix(min(sealedChunk, pending.count)))
            pending.removeFirst(chunk.count)
            var chunkNonce = [UInt8](repeating: 0, count: 12)
            for i in 0..<8 { chunkNonce[3 + i] = UInt8(truncatingIfNeeded: counter >> (8 * (7 - UInt64(i)))) }
            chunkNonce[11] = last ? 1 : 0
            counter += 1
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: chunkNonce), ciphertext: chunk.dropLast(16), tag: chunk.suffix(16))
            guard let plaintext = try? ChaChaPoly.open(box, using: payloadKey) else {
                // A full chunk that opens as a middle one: the file was cut at a chunk boundary.
                // Anything else is a changed byte (or a cut inside a chunk: the same to us).
                if last && chunk.count == sealedChunk {
                    chunkNonce[11] = 0
                    let middle = try ChaChaPoly.SealedBox(
                        nonce: ChaChaPoly.Nonce(data: chunkNonce), ciphertext: chunk.dropLast(16), tag: chunk.suffix(16))
                    if (try? ChaChaPoly.open(middle, using: payloadKey)) != nil { throw Problem.truncated }
                }
                throw Problem.damagedPayload
            }
            // Only an empty file may have an empty chunk.
            if plaintext.isEmpty && counter > 1 { throw Problem.damagedPayload }
            try output(Array(plaintext))
            if last { return }
        }
    }

    static func unwrap(share: String, body: String, identity: AgeIdentity) throws -> SymmetricKey {
        guard let shareBytes = decode64(share), shareBytes.count == 32, let sealed = decode64(body), sealed.count == 32 else {
            throw Problem.malformedHeader
        }
        let secret = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: identity.secretKey)
        // A low-order share gives an all-zero secret: the age spec says abort.
        guard let shared = try? X25519.sharedSecret(secret, shareBytes) else { throw Problem.malformedHeader }
        let wrapKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: shareBytes + identity.recipient.publicKey, sharedInfo: Array("age-encryption.org/v1/X25519".utf8),
            outputByteCount: 32)
        let box = try ChaChaPoly.SealedBox(
            nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)), ciphertext: sealed.prefix(16), tag: sealed.suffix(16))
        return SymmetricKey(data: try ChaChaPoly.open(box, using: wrapKey))
    }

    /// Unpadded standard base64, as age writes it (padding or stray characters refused).
    static func decode64(_ text: String) -> [UInt8]? {
        guard !text.contains("=") else { return nil }
        let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: padded).map(Array.init)
    }
}
