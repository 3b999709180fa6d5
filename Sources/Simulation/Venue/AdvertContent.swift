import Herald

/// What a simulated device puts in its advert, by meaning. The air turns it into advertising
/// data bytes with the project's advertising-data builder.
public enum AdvertContent: Sendable, Hashable {
    /// Flags, the Herald service `0xFCF6` in the complete 16-bit list, manufacturer data `0x05F1`
    /// with the pseudo device address (Herald for Android).
    case heraldAndroid(PseudoDeviceAddress)
    /// The Herald service `0xFCF6` in the 16-bit list only (an iPhone in the foreground).
    case heraldService
    /// Apple manufacturer data (`0x004C`) and nothing else: an iPhone in the background, an
    /// accessory, an iPhone without Herald. The bytes follow the company ID.
    case apple([UInt8])
    /// Exposure Notification: the `0xFD6F` service list and service data with the RPI and
    /// metadata of the device's current rotation epoch.
    case exposureNotification
    /// Some other device: manufacturer data of another company, maybe some 16-bit services.
    case other(companyID: UInt16, data: [UInt8], services: [UInt16])
}

/// Apple manufacturer data (after the company ID) of devices the simulation carries.
public enum AppleData {
    /// An iPhone running Herald in the background: Apple's overflow area (type `0x01`, 16 bytes
    /// of hashed service bits) with the bit of the Herald service set. The bit's position is
    /// Apple's secret; any non-zero area passes Herald's device filter, which is what matters.
    public static let heraldInBackground: [UInt8] = [0x01] + [0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0]

    /// Nearby Info of an iPhone (type `0x10`; its action byte `0x18` is none of the ones Herald's
    /// filter ignores): passes the filter, so the node connects and finds no Herald service.
    public static let iPhoneNearbyInfo: [UInt8] = [0x10, 0x05, 0x01, 0x18, 0x4F, 0x2A, 0x91]

    /// Accessories, each matched by one of Herald's device filter patterns.
    public static let accessories: [[UInt8]] = [
        // AirPods: proximity pairing (type 0x07, pattern ^07).
        [0x07, 0x19, 0x01, 0x0E, 0x20, 0x2B, 0x99, 0x8F, 0x01, 0x00, 0x05]
            + [UInt8](repeating: 0x3C, count: 16),
        // A watch: Nearby Info with action 0x14 (pattern ^10....14).
        [0x10, 0x05, 0x0B, 0x14, 0x1D, 0x7E, 0x02],
        // A Mac: Handoff (type 0x0C, pattern ^0C).
        [0x0C, 0x0E, 0x00, 0x51, 0x07, 0xA3, 0x66, 0x20, 0x19, 0xE2, 0x45, 0x8B, 0x2D, 0xC1, 0x70, 0x0E],
        // An Apple TV: AirPlay target (type 0x09, pattern ^09).
        [0x09, 0x06, 0x03, 0x1A, 0xC0, 0xA8, 0x01, 0x21],
    ]
}
