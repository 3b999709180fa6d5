import Sightings

/// Whether a payload carries a placeholder where its identifier belongs: a value that many
/// devices send at once, so it names no one.
///
/// The known case: Herald's simple payload (0x10) derives its 16-byte contact identifier from a
/// day index 0…2000 counted from 2020-09-24; outside that range (from 2026-03-18) both Herald
/// platforms send 16 zero bytes, so every such phone carries the same payload. The class, not
/// that one input: an identifier whose bytes are all one value (zeros, 0xFF, …) is a placeholder.
/// A derived identifier (SHA-256, AES) takes such a value with probability 2⁻¹²⁰, so no real
/// identity is lost. Where the identifier sits:
/// - `gaen`: the rolling proximity identifier, the first 16 bytes;
/// - `herald`: a simple payload's contact identifier (bytes 5..<21, after version, country and
///   state); a test payload's (routing 0x00–0x07) 4-byte id and its padding (bytes 3…); any other
///   Herald format, the bytes after its first;
/// - `opentrace`, `advert`: the whole payload.
/// An empty identifier is a placeholder too; one shorter than ``minimumIdentifierBytes`` is
/// left alone (too short to tell).
public enum PlaceholderIdentifier {
    /// Identifiers shorter than this are never called placeholders.
    public static let minimumIdentifierBytes = 4

    public static func isPlaceholder(kind: PayloadKind, payload: [UInt8]) -> Bool {
        let identifier: ArraySlice<UInt8>
        switch kind {
        case .gaen:
            identifier = payload.prefix(16)
        case .herald:
            switch PayloadFormat(classifying: payload) {
            case .simple:
                identifier = payload.dropFirst(5).prefix(16)
            case .customRouting:
                identifier = payload.dropFirst(3)
            default:
                identifier = payload.dropFirst()
            }
        case .opentrace, .advert:
            identifier = payload[...]
        }
        guard let first = identifier.first else { return true }
        guard identifier.count >= minimumIdentifierBytes else { return false }
        return identifier.allSatisfy { $0 == first }
    }
}
