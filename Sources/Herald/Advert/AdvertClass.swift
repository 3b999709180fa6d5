/// What one advertising report is, as far as the node cares.
public enum AdvertClass: Hashable, Sendable {
    /// The Herald service (current 0xFCF6 or legacy 128-bit) is in the advert: a Herald Android
    /// phone, an iPhone running Herald in the foreground, or another venue beacon. Read its payload
    /// over GATT. `pseudoAddress` links an Android phone across address rotations; `apple` says
    /// Apple manufacturer data came with it (a foreground iPhone).
    case herald(pseudoAddress: PseudoDeviceAddress?, apple: Bool)
    /// Apple manufacturer data without the Herald service and not filtered as an accessory: maybe
    /// an iPhone running Herald in the background (its service UUID hides in Apple's overflow
    /// area). Connect and look for the service.
    case apple
    /// An Exposure Notification advert; its RPI is the payload, no connection needed.
    case gaen(GAENAdvert)
    /// The OpenTrace service is in the advert (only when enabled).
    case openTrace
    /// Service data of the configured advert-based protocol; the slice shares the report's bytes.
    case advertProtocol(payload: ArraySlice<UInt8>)
    /// Nothing the node records.
    case ignored(IgnoreReason)

    public enum IgnoreReason: Hashable, Sendable {
        /// Apple manufacturer data that Herald's device filter marks as a device that cannot host
        /// the Herald service (AirPods, Macs, watches, TVs...).
        case appleAccessory
        /// No Herald service, Apple data or enabled protocol.
        case unrelated
    }
}
