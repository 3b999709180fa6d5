import BLEHost

/// What the peer's parser returns for an advert (bluetooth-data-tools'
/// `parse_advertisement_data_bytes`: local name, service UUIDs as 128-bit strings, service data
/// by UUID string, manufacturer data by company id, TX power), built the same way here from our
/// AD structure walk, so the `parse` stage compares like with like: every field decoded, strings
/// and byte arrays allocated, as the peer's Python objects are. The two maps are small arrays of
/// pairs (a later entry replaces an earlier one with the same key, as in the peer's dicts): an
/// advert carries one or two entries.
struct ParsedAdvert {
    var localName: String?
    var serviceUUIDs: [String] = []
    var serviceData: [(uuid: String, data: [UInt8])] = []
    var manufacturerData: [(company: UInt16, data: [UInt8])] = []
    var txPower: Int?

    init(_ bytes: ArraySlice<UInt8>, names: inout UUIDNames) {
        for structure in AdvertisingData(bytes) {
            let data = structure.data
            switch structure.type {
            case .completeLocalName, .shortenedLocalName:
                // The peer keeps the complete name over a shortened one, and the last of each.
                if structure.type == .completeLocalName || localName == nil {
                    localName = String(decoding: data, as: UTF8.self)
                }
            case .txPowerLevel:
                if let byte = data.first { txPower = Int(Int8(bitPattern: byte)) }
            case .manufacturerSpecificData:
                guard data.count >= 2 else { continue }
                let company = UInt16(data[data.startIndex]) | UInt16(data[data.startIndex + 1]) << 8
                manufacturerData.removeAll { $0.company == company }
                manufacturerData.append((company, Array(data.dropFirst(2))))
            default:
                if let width = structure.type.serviceUUIDWidth {
                    var offset = data.startIndex
                    while offset + width <= data.endIndex {
                        if let uuid = try? BluetoothUUID(littleEndianBytes: data[offset..<(offset + width)]) {
                            let text = names[uuid]
                            if !serviceUUIDs.contains(text) { serviceUUIDs.append(text) }
                        }
                        offset += width
                    }
                } else if let width = structure.type.serviceDataUUIDWidth, data.count >= width,
                    let uuid = try? BluetoothUUID(littleEndianBytes: data.prefix(width))
                {
                    let name = names[uuid]
                    serviceData.removeAll { $0.uuid == name }
                    serviceData.append((name, Array(data.dropFirst(width))))
                }
            }
        }
    }
}

/// The UUID strings made so far, as the peer keeps its UUID strings in LRU caches
/// (`_cached_uint16_bytes_as_uuid` and friends): even its "uncached" parse does not format a
/// UUID it has formatted before.
struct UUIDNames {
    private var names: [BluetoothUUID: String] = [:]

    subscript(uuid: BluetoothUUID) -> String {
        mutating get {
            if let name = names[uuid] { return name }
            let name = uuid.fullString
            if names.count < 4096 { names[uuid] = name }
            return name
        }
    }
}
