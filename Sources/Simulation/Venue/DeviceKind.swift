import Sightings
import VenueDiary

/// What a simulated device is, as far as the node and the efficacy report care.
public enum DeviceKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Herald for Android: advertises the Herald service with its pseudo device address, rotates its
    /// Bluetooth address, serves its payload over GATT.
    case heraldAndroid = "herald_android"
    /// An Android phone running Herald that cannot advertise: it finds the node and writes its
    /// payload (`0x01`), then its RSSI (`0x02`), to the node's signal characteristic.
    case heraldAndroidWriter = "herald_android_writer"
    /// An iPhone running Herald in the foreground: the Herald service is in its 16-bit UUID list.
    case heraldIPhoneForeground = "herald_iphone_foreground"
    /// An iPhone running Herald in the background: its advert is only Apple manufacturer data (the
    /// service hides in Apple's overflow area), so the node must connect and discover it.
    case heraldIPhoneBackground = "herald_iphone_background"
    /// A phone with only Exposure Notification: service data `0xFD6F`, RPI rotating with its address.
    case gaenPhone = "gaen_phone"
    /// An Apple accessory (AirPods, watch, Mac, TV): Apple data that Herald's device filter ignores.
    case appleAccessory = "apple_accessory"
    /// An iPhone without a Herald app: Apple data that passes the filter; a connection finds no
    /// Herald service.
    case applePhone = "apple_phone"
    /// Any other BLE device (fitness band, speaker, beacon): nothing the node records.
    case otherDevice = "other_device"

    /// Phones whose presence the diary should record (the truth has visits for these).
    public var isRecordedPhone: Bool { payloadKind != nil }

    /// The diary kind of this device's identity; nil for noise.
    public var payloadKind: PayloadKind? {
        switch self {
        case .heraldAndroid, .heraldAndroidWriter, .heraldIPhoneForeground, .heraldIPhoneBackground: return .herald
        case .gaenPhone: return .gaen
        case .appleAccessory, .applePhone, .otherDevice: return nil
        }
    }

    /// Whether it sends adverts (the writer only connects and writes).
    public var advertises: Bool { self != .heraldAndroidWriter }

    /// The phone kinds a ``PhoneMix`` chooses among.
    public static let phoneKinds: [DeviceKind] = [
        .heraldAndroid, .heraldAndroidWriter, .heraldIPhoneForeground, .heraldIPhoneBackground, .gaenPhone,
    ]
}
