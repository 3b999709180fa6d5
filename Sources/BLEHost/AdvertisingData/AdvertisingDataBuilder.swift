/// Builds advertising or scan response data from AD structures. ``build()`` checks the
/// 31-byte limit of a legacy PDU and says by how much it is exceeded.
///
///     var builder = AdvertisingDataBuilder()
///     builder.appendFlags(.generalDiscoverableLEOnly)
///     builder.appendServiceUUIDs([BluetoothUUID(0xFCF6 as UInt16)])
///     let payload = try builder.build()
public struct AdvertisingDataBuilder: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Appends one structure. Data longer than 254 bytes cannot be encoded and always makes
    /// ``build()`` fail (it is far over 31 bytes anyway).
    public mutating func append(_ type: ADType, _ data: some Collection<UInt8>) {
        bytes.append(UInt8(truncatingIfNeeded: min(data.count + 1, 255)))
        bytes.append(type.rawValue)
        bytes.append(contentsOf: data)
    }

    public mutating func appendFlags(_ flags: ADFlags) { append(.flags, [flags.rawValue]) }

    /// Service UUIDs grouped into one list per width (16-bit aliases as 2 bytes, other base-range
    /// UUIDs as 4 bytes, the rest as 16), in that order.
    public mutating func appendServiceUUIDs(_ uuids: [BluetoothUUID], complete: Bool = true) {
        var list16: [UInt8] = [], list32: [UInt8] = [], list128: [UInt8] = []
        for uuid in uuids {
            if let short = uuid.shortValue {
                list16.appendLE16(short)
            } else if let short32 = uuid.shortValue32 {
                list32.appendLE32(short32)
            } else {
                list128.append(contentsOf: uuid.littleEndianBytes128)
            }
        }
        if !list16.isEmpty { append(complete ? .completeServiceUUIDs16 : .incompleteServiceUUIDs16, list16) }
        if !list32.isEmpty { append(complete ? .completeServiceUUIDs32 : .incompleteServiceUUIDs32, list32) }
        if !list128.isEmpty { append(complete ? .completeServiceUUIDs128 : .incompleteServiceUUIDs128, list128) }
    }

    public mutating func appendLocalName(_ name: String, complete: Bool = true) {
        append(complete ? .completeLocalName : .shortenedLocalName, Array(name.utf8))
    }

    public mutating func appendTxPowerLevel(_ dBm: Int8) { append(.txPowerLevel, [UInt8(bitPattern: dBm)]) }

    /// Service data in the shortest UUID form (16, 32 or 128 bits).
    public mutating func appendServiceData(_ uuid: BluetoothUUID, _ data: some Collection<UInt8>) {
        var body: [UInt8] = []
        let type: ADType
        if let short = uuid.shortValue {
            body.appendLE16(short)
            type = .serviceData16
        } else if let short32 = uuid.shortValue32 {
            body.appendLE32(short32)
            type = .serviceData32
        } else {
            body.append(contentsOf: uuid.littleEndianBytes128)
            type = .serviceData128
        }
        body.append(contentsOf: data)
        append(type, body)
    }

    public mutating func appendManufacturerData(company: UInt16, _ data: some Collection<UInt8>) {
        var body: [UInt8] = []
        body.appendLE16(company)
        body.append(contentsOf: data)
        append(.manufacturerSpecificData, body)
    }

    /// The payload, or ``AdvertisingPayloadTooLong`` with the length reached.
    public func build() throws(AdvertisingPayloadTooLong) -> AdvertisingPayload { try AdvertisingPayload(bytes) }
}
