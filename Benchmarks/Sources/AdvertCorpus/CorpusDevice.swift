import BLEHost

/// What a simulated advertiser is. The raw value is written into the top byte of every address
/// the device uses (see ``CorpusDevice/address(at:)``), so a benchmark reading the capture back
/// can play the phone's side of a connection (which kind answers with which services and payload)
/// from the address alone.
public enum CorpusKind: UInt8, CaseIterable, Sendable {
    /// Herald on Android: service 0xFCF6 and the pseudo device address (manufacturer 0x05F1).
    case heraldAndroid = 1
    /// Herald on an iPhone in the foreground: service list [0xFCF6] only (CoreBluetooth).
    case heraldIPhoneForeground = 2
    /// Herald on an iPhone in the background: Apple manufacturer data with the overflow area.
    case heraldIPhoneBackground = 3
    /// Exposure Notification: service data 0xFD6F (RPI + AEM), not connectable.
    case gaen = 4
    /// AirPods, watches, Macs: Apple data that Herald's device filter drops.
    case appleAccessory = 5
    /// An iPhone without Herald: Apple nearby info the filter lets through (the node connects and
    /// finds no Herald service).
    case appleOther = 6
    /// Other BLE devices: Microsoft CDP, Samsung, Eddystone, Xiaomi sensors, fitness bands.
    case noise = 7

    /// Share of a venue's 500 devices (a café or bar: half the phones run Herald).
    var share: Int {
        switch self {
        case .heraldAndroid: return 20
        case .heraldIPhoneForeground: return 8
        case .heraldIPhoneBackground: return 17
        case .gaen: return 15
        case .appleAccessory: return 20
        case .appleOther: return 5
        case .noise: return 15
        }
    }

    /// Relative advertising rate (Android low-latency advertising is fastest; accessories slower).
    var rate: Int {
        switch self {
        case .heraldAndroid: return 4
        case .heraldIPhoneForeground, .heraldIPhoneBackground: return 3
        case .gaen: return 4
        case .appleAccessory, .appleOther: return 2
        case .noise: return 2
        }
    }

    public var isConnectable: Bool {
        switch self {
        case .gaen: return false
        default: return true
        }
    }
}

/// One simulated advertiser of the corpus.
public struct CorpusDevice: Sendable {
    public var index: Int
    public var kind: CorpusKind
    /// Seconds between address (and RPI, pseudo address stays) rotations.
    public var rotationPeriod: Double
    /// Offset of this device's rotation schedule.
    public var rotationPhase: Double
    /// Median RSSI at the node.
    public var baseRSSI: Int
    /// Which variant of its kind (accessory model, noise vendor).
    public var variant: Int

    /// The device's address during the rotation epoch containing `time`. Top byte: 0x40 | kind
    /// (the two top bits of a resolvable private address are 01); then 24 bits of device index
    /// and 16 bits of epoch.
    public func address(at time: Double) -> BluetoothAddress {
        let epoch = UInt64(max(0, (time + rotationPhase) / rotationPeriod)) & 0xFFFF
        let low = mix64(UInt64(index) << 16 | epoch) & 0xFFFF
        return BluetoothAddress(rawValue: UInt64(0x40 | kind.rawValue) << 40 | UInt64(index & 0xFF_FFFF) << 16 | low)
    }

    public var addressType: AddressType { kind == .noise && variant % 3 == 0 ? .public : .random }

    /// The kind encoded in an address made by ``address(at:)``.
    public static func kind(of address: BluetoothAddress) -> CorpusKind? {
        CorpusKind(rawValue: UInt8((address.rawValue >> 40) & 0x3F))
    }

    /// The device index encoded in an address made by ``address(at:)``.
    public static func index(of address: BluetoothAddress) -> Int { Int((address.rawValue >> 16) & 0xFF_FFFF) }

    /// The Herald payload a phone of this index serves (Herald's 129-byte test payload layout).
    public static func heraldPayload(index: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 129)
        let id = UInt32(truncatingIfNeeded: index)
        for k in 0..<4 { bytes[3 + k] = UInt8(truncatingIfNeeded: id >> (8 * UInt32(k))) }
        return bytes
    }

    var pseudoAddress: UInt64 { mix64(0x5EED_0000_0000 | UInt64(index)) & 0xFFFF_FFFF_FFFF }

    /// AD bytes of one advert (or scan response). `unique`, when given, is worked into a field
    /// that does not change what the advert is (a manufacturer data tail, the AEM, Apple's
    /// rotating bytes, a name), so that every report of a stream differs from every other.
    public func advertisingData(at time: Double, scanResponse: Bool, unique: UInt32?) -> [UInt8] {
        var ad: [UInt8] = []
        func structure(_ type: UInt8, _ body: [UInt8]) {
            ad.append(UInt8(body.count + 1))
            ad.append(type)
            ad.append(contentsOf: body)
        }
        func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
        let u = unique.map { le(UInt64($0), 3) }
        let epoch = UInt64(max(0, (time + rotationPhase) / rotationPeriod))
        let rotating = mix64(UInt64(index) << 20 | epoch)

        if scanResponse {
            let names = ["Galaxy Buds", "Charge 5", "Mi Band 6", "LE-Bose QC", "Tile", "WH-1000XM4"]
            var name = Array(names[variant % names.count].utf8)
            if let u { name += Array(Hex.encode(u).utf8) }
            structure(0x09, name)
            if variant % 2 == 0 { structure(0x0A, [UInt8(bitPattern: -8)]) }
            return ad
        }

        switch kind {
        case .heraldAndroid:
            structure(0x01, [0x1A])
            structure(0x03, [0xF6, 0xFC])
            structure(0xFF, [0xF1, 0x05] + le(pseudoAddress, 6) + (u ?? []))
            if variant % 10 == 0 { structure(0x0A, [UInt8(bitPattern: -12)]) }
        case .heraldIPhoneForeground:
            structure(0x01, [0x1A])
            structure(0x03, [0xF6, 0xFC])
            if let u { structure(0x09, Array("iPhone ".utf8) + Array(Hex.encode(u).utf8)) }
        case .heraldIPhoneBackground:
            // Apple's overflow area: a 128-bit mask with the bit of Herald's service hash set
            // (and other apps' bits; the unique value lands in those).
            var mask = [UInt8](repeating: 0, count: 16)
            mask[5] = 0x20
            if let u { mask[0] = u[0]; mask[1] = u[1]; mask[2] = u[2] }
            structure(0x01, [0x06])
            structure(0xFF, [0x4C, 0x00, 0x01] + mask)
        case .gaen:
            structure(0x01, [0x1A])
            structure(0x03, [0x6F, 0xFD])
            let rpi = le(rotating, 8) + le(mix64(rotating), 8)
            let aem = u.map { $0 + [0x40] } ?? le(mix64(rotating ^ 0xAE), 4)
            structure(0x16, [0x6F, 0xFD] + rpi + aem)
        case .appleAccessory:
            let r = le(rotating, 8) + le(mix64(rotating), 8) + le(mix64(~rotating), 8)
            var data: [UInt8]
            switch variant % 3 {
            case 0:  // AirPods proximity pairing (0x07)
                data = [0x07, 0x19, 0x01, 0x0E, 0x20, 0x2B, 0x99, 0x8F, 0x01] + Array(r[0..<16])
            case 1:  // watch nearby info: type 0x10, action 0x14 matches ^10....14
                data = [0x10, 0x05, 0x0B, 0x14] + Array(r[0..<3])
            default:  // Mac handoff (0x0C) then nearby info
                data = [0x0C, 0x0E, 0x00] + Array(r[0..<14]) + [0x10, 0x05, 0x01, 0x1C] + Array(r[14..<17])
            }
            if let u { data.replaceSubrange((data.count - 3)..<data.count, with: u) }
            if variant % 3 != 0 { structure(0x01, [0x1A]) }  // AirPods send no flags (no room)
            structure(0xFF, [0x4C, 0x00] + data)
        case .appleOther:
            var data: [UInt8] = [0x10, 0x06, 0x1B, 0x1E] + le(rotating, 4)
            if let u { data.replaceSubrange((data.count - 3)..<data.count, with: u) }
            structure(0x01, [0x1A])
            structure(0xFF, [0x4C, 0x00] + data)
        case .noise:
            let r = le(rotating, 8) + le(mix64(rotating), 8) + le(mix64(~rotating), 8)
            switch variant % 5 {
            case 0:  // Microsoft Swift Pair / CDP beacon
                structure(0xFF, [0x06, 0x00, 0x01, 0x09, 0x20, 0x02] + Array(r[0..<20]) + (u ?? [0, 0, 0]))
            case 1:  // Samsung
                structure(0x01, [0x1A])
                structure(0xFF, [0x75, 0x00, 0x42, 0x04, 0x01, 0x80, 0x60] + Array(r[0..<12]) + (u ?? [0, 0, 0]))
            case 2:  // Eddystone UID
                structure(0x01, [0x06])
                structure(0x03, [0xAA, 0xFE])
                structure(0x16, [0xAA, 0xFE, 0x00, 0xEE] + Array(r[0..<13]) + (u ?? [0, 0, 0]))
            case 3:  // Xiaomi sensor (MiBeacon service data with a frame counter)
                structure(0x01, [0x06])
                structure(0x16, [0x95, 0xFE, 0x50, 0x20, 0xAA, 0x01] + (u ?? le(rotating, 3)) + le(rotating, 6) + [0x0D, 0x10, 0x04, 0xE1, 0x00, 0x5C, 0x01])
            default:  // fitness band: 128-bit service list
                structure(0x01, [0x06])
                structure(0x07, [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E])
                if let u { structure(0xFF, [0x57, 0x01] + u) }
            }
        }
        return ad
    }
}
