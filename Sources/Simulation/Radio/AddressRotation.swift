import BLEHost

/// A device's Bluetooth address over time: a new random address every `period` seconds.
///
/// Stateless: the address (and a GAEN phone's rolling proximity identifier, which rotates with it)
/// is a hash of the device's seed and the rotation epoch, so any time can be asked in any order
/// and a seed always gives the same addresses.
public struct AddressRotation: Sendable, Hashable {
    /// Seconds between rotations; `.infinity` for an address that never changes.
    public let period: Double
    /// Where virtual time 0 falls inside the first period, seconds in [0, period).
    public let phase: Double
    public let seed: UInt64
    public let style: Style

    public enum Style: Sendable, Hashable {
        /// What phones use: resolvable private addresses (two top bits 01).
        case resolvablePrivate
        /// A random static address (two top bits 11), for devices that keep one.
        case staticRandom
    }

    public init(period: Double, phase: Double, seed: UInt64, style: Style = .resolvablePrivate) {
        self.period = period
        self.phase = period.isFinite ? phase : 0
        self.seed = seed
        self.style = style
    }

    /// An address that never changes.
    public static func fixed(seed: UInt64) -> AddressRotation {
        AddressRotation(period: .infinity, phase: 0, seed: seed, style: .staticRandom)
    }

    /// The rotation epoch at `time` (0 for a fixed address).
    public func epoch(at time: Double) -> Int64 {
        guard period.isFinite else { return 0 }
        var epoch = Int64(((time + phase) / period).rounded(.down))
        // Agree with start(ofEpoch:) to the last bit, whatever the rounding of the division.
        if start(ofEpoch: epoch + 1) <= time { epoch += 1 } else if start(ofEpoch: epoch) > time { epoch -= 1 }
        return epoch
    }

    /// When `epoch` begins (virtual seconds); -infinity for epoch 0 of a fixed address.
    public func start(ofEpoch epoch: Int64) -> Double {
        guard period.isFinite else { return -.infinity }
        return Double(epoch) * period - phase
    }

    /// When `epoch` ends.
    public func end(ofEpoch epoch: Int64) -> Double {
        guard period.isFinite else { return .infinity }
        return Double(epoch + 1) * period - phase
    }

    public func address(at time: Double) -> BluetoothAddress {
        address(ofEpoch: epoch(at: time))
    }

    public func address(ofEpoch epoch: Int64) -> BluetoothAddress {
        let bits = hash(epoch, 0xA11) & 0x3FFF_FFFF_FFFF
        switch style {
        case .resolvablePrivate: return BluetoothAddress(rawValue: 0x4000_0000_0000 | bits)
        case .staticRandom: return BluetoothAddress(rawValue: 0xC000_0000_0000 | bits)
        }
    }

    /// The 16-byte GAEN rolling proximity identifier advertised during `epoch`.
    public func rollingProximityIdentifier(ofEpoch epoch: Int64) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.appendBE64(hash(epoch, 0x2B1))
        bytes.appendBE64(hash(epoch, 0x2B2))
        return bytes
    }

    /// The 4 bytes of GAEN associated encrypted metadata advertised during `epoch`.
    public func encryptedMetadata(ofEpoch epoch: Int64) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.appendBE32(UInt32(truncatingIfNeeded: hash(epoch, 0xAE3)))
        return bytes
    }

    private func hash(_ epoch: Int64, _ purpose: UInt64) -> UInt64 {
        SplitMix64.mix(SplitMix64.mix(seed ^ purpose) ^ UInt64(bitPattern: epoch))
    }
}
