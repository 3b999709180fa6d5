import BLEHost
import Sightings

/// What the Herald node tells the layers above (presence tracker, diary, Herald-format logs). The
/// only thing they see of Bluetooth.
///
/// Times are seconds on the node's one steady clock (the caller's clock; the node never reads a
/// clock itself); whoever records an event turns them into wall time.
public enum SensorEvent: Hashable, Sendable {
    /// A target was seen for the first time (or again after it was forgotten).
    case detect(Target, time: Double)
    /// A target was measured: from its advert, or from an RSSI it wrote to us. `rssi` is nil when
    /// the controller could not measure it (HCI reports 127). `payload` is the target's payload
    /// when it is known; measurements without one are attributed later, see `read`. `txPower` is
    /// the TX power level (dBm) the advert announced, if it did (Herald's calibration).
    case measure(Target, rssi: Int?, payload: SensorPayload?, txPower: Int? = nil, time: Double)
    /// A target's payload became known: read over GATT, written to our signal characteristic, or
    /// taken from its advert. `earlier` holds the target's measurements taken before, oldest
    /// first, for the presence tracker to attribute to this payload.
    case read(Target, payload: SensorPayload, earlier: [RSSISample], time: Double)
    /// A target shared the payloads of phones it saw recently (signal write `0x03`).
    case share(Target, payloads: [SensorPayload], rssi: Int?, time: Double)
    /// The node stopped following a target: unseen for its clean interval, or its place taken
    /// in a full table. A later sighting detects it again (a new target).
    case delete(Target, time: Double)
    /// The node's Bluetooth condition changed: the radio runs (``RadioCondition/running``) or
    /// the controller became unavailable.
    case bluetoothState(RadioCondition, time: Double)

    public var time: Double {
        switch self {
        case .detect(_, let time), .measure(_, _, _, _, let time), .read(_, _, _, let time), .share(_, _, _, let time),
            .delete(_, let time), .bluetoothState(_, let time):
            return time
        }
    }
}

/// A device the node follows. `id` is the node's stable identity for it: the same across the
/// device's address rotations whenever they can be linked (a Herald Android phone's pseudo device
/// address); a new id otherwise.
public struct Target: Hashable, Sendable, CustomStringConvertible {
    public var id: TargetID
    /// The address it was last seen at.
    public var address: BluetoothAddress
    public var pseudoAddress: PseudoDeviceAddress?
    /// Last, where it packs beside the optional's tag (32 bytes a target, not 40).
    public var addressType: AddressType

    public init(id: TargetID, address: BluetoothAddress, addressType: AddressType, pseudoAddress: PseudoDeviceAddress? = nil) {
        self.id = id
        self.address = address
        self.addressType = addressType
        self.pseudoAddress = pseudoAddress
    }

    public var description: String { "target \(id.rawValue) (\(address))" }
}

/// The node's identity for a target; never reused while the node runs.
public struct TargetID: WordHashable, Sendable, Comparable {
    public var rawValue: UInt64
    public var hashWord: UInt64 { rawValue }
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A payload and the protocol it came from.
public struct SensorPayload: Hashable, Sendable, CustomStringConvertible {
    public var bytes: [UInt8]
    /// What was heard with the payload but is not part of its identity: a GAEN advert's 4 bytes
    /// of Associated Encrypted Metadata, big-endian as broadcast (they rotate with the
    /// identifier; the exposure check decrypts them for the phone's TX power). Left out of
    /// equality and hashing: two sightings of one identifier are one payload. Four bytes in
    /// the padding beside `kind`, so a target's record does not grow.
    public var metadata: UInt32?
    /// After the bytes, so that a record's small fields pack beside it.
    public var kind: PayloadKind

    public init(kind: PayloadKind, bytes: [UInt8], metadata: UInt32? = nil) {
        self.kind = kind
        self.bytes = bytes
        self.metadata = metadata
    }

    public static func == (a: Self, b: Self) -> Bool { a.kind == b.kind && a.bytes == b.bytes }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(bytes)
    }

    /// Herald's short id for logs.
    public var shortName: String { heraldShortName(bytes) }

    public var description: String { "\(kind.rawValue):\(shortName)" }

    /// ``metadata`` as the 4 bytes broadcast.
    public var metadataBytes: [UInt8]? {
        metadata.map { m in [UInt8(m >> 24), UInt8(m >> 16 & 0xFF), UInt8(m >> 8 & 0xFF), UInt8(m & 0xFF)] }
    }
}
