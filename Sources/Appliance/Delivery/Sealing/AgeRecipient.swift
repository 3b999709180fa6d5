import Crypto
import Foundation

/// An age X25519 recipient: a contact-tracing team's public key, `age1…` (bech32, 32 bytes).
public struct AgeRecipient: Sendable, Equatable, CustomStringConvertible {
    public let publicKey: [UInt8]

    /// Parses `age1…`; says what is wrong otherwise (for config messages).
    public static func parse(_ text: String) -> Result<AgeRecipient, AgeKeyProblem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("age1") else { return .failure(.notAnAgeKey) }
        switch Bech32.decode(trimmed) {
        case .failure(let problem):
            return .failure(.bech32(problem))
        case .success(let (hrp, data)):
            guard hrp == "age" else { return .failure(.notAnAgeKey) }
            guard data.count == 32 else { return .failure(.wrongLength(data.count)) }
            guard (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: data)) != nil else { return .failure(.wrongLength(data.count)) }
            // Any scalar will do: a low-order point gives all zeros with every one.
            guard (try? X25519.sharedSecret(Curve25519.KeyAgreement.PrivateKey(), data)) != nil else { return .failure(.lowOrder) }
            return .success(AgeRecipient(publicKey: data))
        }
    }

    public init(publicKey: [UInt8]) { self.publicKey = publicKey }

    public var description: String { Bech32.encode(hrp: "age", data: publicKey) }
}

/// An age X25519 identity (`AGE-SECRET-KEY-1…`): only for tests and `venue-beacon open`; the
/// node never holds the tracers' secret key.
public struct AgeIdentity: Sendable {
    public let secretKey: [UInt8]

    public static func generate() -> AgeIdentity {
        AgeIdentity(secretKey: Array(Curve25519.KeyAgreement.PrivateKey().rawRepresentation))
    }

    public static func parse(_ text: String) -> Result<AgeIdentity, AgeKeyProblem> {
        switch Bech32.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
        case .failure(let problem): return .failure(.bech32(problem))
        case .success(let (hrp, data)):
            guard hrp == "age-secret-key-" else { return .failure(.notAnAgeKey) }
            guard data.count == 32 else { return .failure(.wrongLength(data.count)) }
            return .success(AgeIdentity(secretKey: data))
        }
    }

    public init(secretKey: [UInt8]) { self.secretKey = secretKey }

    public var recipient: AgeRecipient {
        let key = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secretKey)
        return AgeRecipient(publicKey: Array(key.publicKey.rawRepresentation))
    }

    /// `AGE-SECRET-KEY-1…`, as `age-keygen` writes it.
    public var encoded: String { Bech32.encode(hrp: "age-secret-key-", data: secretKey).uppercased() }
}

public enum AgeKeyProblem: Error, Equatable, CustomStringConvertible {
    case notAnAgeKey
    case bech32(Bech32.Problem)
    case wrongLength(Int)
    /// A low-order point (0, 1, p − 1, an order-8 point, or another encoding of one): every
    /// shared secret with it is all zeros, so anything sealed to it opens for anyone.
    case lowOrder

    public var description: String {
        switch self {
        case .notAnAgeKey: "is not an age public key (age1…, as age-keygen prints it)"
        case .bech32(let problem): "is not a valid age public key: it \(problem)"
        case .wrongLength(let n): "is not an X25519 age public key (it holds \(n) bytes, not 32)"
        case .lowOrder:
            "is a weak key (a low-order X25519 point): an export sealed to it would open for anyone; "
                + "ask the contact tracers for the key age-keygen made (age -r refuses this one too)"
        }
    }
}

/// X25519 as age uses it: the spec requires refusing an all-zero shared secret, which is what a
/// low-order public key or share gives with every scalar.
enum X25519 {
    /// Thrown for an all-zero shared secret.
    struct LowOrderPoint: Error {}

    static func sharedSecret(_ privateKey: Curve25519.KeyAgreement.PrivateKey, _ publicKey: [UInt8]) throws -> SharedSecret {
        let shared = try privateKey.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey))
        guard shared.withUnsafeBytes({ $0.contains { $0 != 0 } }) else { throw LowOrderPoint() }
        return shared
    }
}
