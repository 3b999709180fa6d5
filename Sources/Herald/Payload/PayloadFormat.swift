#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a Herald payload is, by its first byte (Herald `specs/payload-interop.md`, Annex D).
public enum PayloadFormat: Hashable, Sendable {
    /// 0x00–0x07: custom, 4-byte routing code (Herald's demo test payload is one).
    case customRouting
    /// 0x08–0x0F: custom, country and state.
    case customCountryState
    /// 0x10–0x17: simple payload, 21 bytes plus optional extension.
    case simple
    /// 0x20–0x27: secured payload.
    case secured
    /// 0x30–0x37: venue beacon.
    case venueBeacon
    /// 0x80–0x87.
    case gaen
    /// 0x88–0x8F.
    case robert
    /// 0x90–0x97.
    case openTrace
    /// 0x98–0x9F.
    case dp3t
    /// 0xA0–0xA7.
    case pact
    /// Anything else, including an empty payload.
    case reserved

    public init<C: Collection>(classifying payload: C) where C.Element == UInt8 {
        guard let first = payload.first else {
            self = .reserved
            return
        }
        switch first {
        case 0x00...0x07: self = .customRouting
        case 0x08...0x0F: self = .customCountryState
        case 0x10...0x17: self = .simple
        case 0x20...0x27: self = .secured
        case 0x30...0x37: self = .venueBeacon
        case 0x80...0x87: self = .gaen
        case 0x88...0x8F: self = .robert
        case 0x90...0x97: self = .openTrace
        case 0x98...0x9F: self = .dp3t
        case 0xA0...0xA7: self = .pact
        default: self = .reserved
        }
    }

    /// A simple payload's length without extension: 5-byte header + 16-byte contact identifier.
    public static let simplePayloadSize = 21
}

/// Herald's short payload id in logs (`PayloadData.shortName`): the first six base64 characters of
/// bytes 3 onwards (skipping the version/country/state header most formats share); the whole
/// payload in base64 when it is 3 bytes or shorter; empty for an empty payload.
public func heraldShortName<C: Collection>(_ payload: C) -> String where C.Element == UInt8 {
    if payload.isEmpty { return "" }
    if payload.count <= 3 { return Data(payload).base64EncodedString() }
    // Six base64 characters need 36 bits: five bytes are enough.
    return String(Data(payload.dropFirst(3).prefix(5)).base64EncodedString().prefix(6))
}
