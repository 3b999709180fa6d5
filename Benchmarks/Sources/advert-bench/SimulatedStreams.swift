import AdvertCorpus
import BLEHost
import Herald
import Simulation

/// The in-memory streams (`--stream`), built with the simulation's devices and the
/// controller-side HCI encoder, one report per event (as controllers mostly send them), at 4
/// adverts per device per simulated second:
///   distinct  every advert differs (addresses, pseudo addresses, RPIs, Apple data): no cache helps,
///             and the node meets a new device with every report;
///   repeats   `--devices` devices (a venue's mix) repeating their adverts, RSSI varying.
struct SimulatedStream {
    static let names = ["distinct", "repeats"]

    private let devices: [SimulatedDevice]
    private var events = CaptureEvents()
    private var deviceOf: [BluetoothAddress: Int] = [:]
    private let reportsPerSecond: Double

    private init(devices: [SimulatedDevice], count: Int) {
        self.devices = devices
        reportsPerSecond = Double(devices.count) * 4
        deviceOf.reserveCapacity(min(count, devices.count * 4096))
    }

    /// A venue's devices: phones of the standard mix plus accessories and other devices.
    static func venueDevices(_ count: Int) -> [SimulatedDevice] {
        let truth = VenueModel.generate(VenueConfiguration(visitors: count, openingHours: 3, seed: 2026, walkPasts: 0))
        return Array(truth.devices.filter { $0.advert != nil }.prefix(count))
    }

    /// The stream called `name` (one of ``names``), `count` reports long.
    static func adverts(_ name: String, devices: [SimulatedDevice], count: Int) -> Adverts {
        var stream = SimulatedStream(devices: devices, count: count)
        if name == "distinct" { stream.distinct(count) } else { stream.repeats(count) }
        return Adverts(
            name: name, path: nil, events: stream.events, duration: Double(count) / stream.reportsPerSecond,
            phones: .simulated(devices: devices, deviceOf: stream.deviceOf))
    }

    private mutating func append(_ k: Int, address: BluetoothAddress, data: [UInt8], rssi: Int8) {
        let device = devices[k]
        let report = LEAdvertisingReport(
            eventType: device.isConnectable ? .connectableUndirected : .nonConnectableUndirected, addressType: .random,
            address: address, data: data[...], rawRSSI: rssi)
        let start = events.storage.count
        events.storage.append(contentsOf: LEAdvertisingReports.packet([report]).body)
        events.ranges.append(start..<events.storage.count)
        events.times.append(Double(events.times.count) / reportsPerSecond)
        deviceOf[address] = k
    }

    private mutating func repeats(_ count: Int) {
        var random = SimulationRandom(seed: 7)
        let data = devices.map { $0.advertisingData(epoch: 0) }
        for _ in 0..<count {
            let k = random.below(devices.count)
            let rssi = Int8(-50 - random.below(45))
            append(k, address: devices[k].rotation.address(ofEpoch: 0), data: data[k], rssi: rssi)
        }
    }

    private mutating func distinct(_ count: Int) {
        var random = SimulationRandom(seed: 8)
        for i in 0..<count {
            let k = i % devices.count
            let device = devices[k]
            let epoch = Int64(i)
            var data = device.advertisingData(epoch: epoch)
            switch device.advert {
            case .heraldAndroid?:
                // A new pseudo device address in the last six bytes.
                var pseudo = [UInt8]()
                PseudoDeviceAddress(rawValue: UInt64(i) &* 0x9E37_79B9).append(to: &pseudo)
                data.replaceSubrange((data.count - 6)..., with: pseudo)
            case .heraldService?:
                break  // nothing to vary but the address: its data ends in the TX power level, after the 0xFCF6 list
            case .apple?, .other?:
                // Vary the last two bytes (Apple data stays what it was for the filter).
                if data.count >= 2 {
                    data[data.count - 1] = UInt8(truncatingIfNeeded: i)
                    data[data.count - 2] = UInt8(truncatingIfNeeded: i >> 8) | 0x01
                }
            case .exposureNotification?, nil:
                break  // a new RPI per epoch already
            }
            append(k, address: device.rotation.address(ofEpoch: epoch), data: data, rssi: Int8(-50 - random.below(45)))
        }
    }
}
