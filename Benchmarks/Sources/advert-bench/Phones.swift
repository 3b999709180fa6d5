import AdvertCorpus
import BLEHost
import Herald
import Simulation

/// The phones' side of the connections the node asks for, answered at once by both pipeline
/// stages so that known payloads reach the presence tracker as in a venue: from the address of a
/// capture-gen corpus device (its kind and index are in the address, see ``CorpusDevice``) or from
/// the simulated device that advertised with the address (the harness's own bookkeeping, built
/// with the stream, before any clock starts).
enum Phones {
    case corpus
    case simulated(devices: [SimulatedDevice], deviceOf: [BluetoothAddress: Int])

    func services(of address: BluetoothAddress) -> DiscoveredServices {
        switch self {
        case .corpus:
            switch CorpusDevice.kind(of: address) {
            case .heraldAndroid: return .android
            case .heraldIPhoneForeground, .heraldIPhoneBackground: return .iPhone
            default: return .none
            }
        case .simulated(let devices, let deviceOf):
            let kind = deviceOf[address].map { devices[$0].kind }
            return kind == .heraldAndroid ? .android : (kind == .heraldIPhoneBackground || kind == .heraldIPhoneForeground ? .iPhone : .none)
        }
    }

    func payload(of address: BluetoothAddress) -> [UInt8] {
        switch self {
        case .corpus: return CorpusDevice.heraldPayload(index: CorpusDevice.index(of: address))
        case .simulated(let devices, let deviceOf): return deviceOf[address].flatMap { devices[$0].payload } ?? []
        }
    }
}
