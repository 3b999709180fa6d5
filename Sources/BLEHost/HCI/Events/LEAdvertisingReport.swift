/// The PDU type an advertising report came from (Event_Type). Open.
public struct LEAdvertisingEventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectableUndirected = LEAdvertisingEventType(rawValue: 0x00)  // ADV_IND
    public static let connectableDirected = LEAdvertisingEventType(rawValue: 0x01)  // ADV_DIRECT_IND
    public static let scannableUndirected = LEAdvertisingEventType(rawValue: 0x02)  // ADV_SCAN_IND
    public static let nonConnectableUndirected = LEAdvertisingEventType(rawValue: 0x03)  // ADV_NONCONN_IND
    public static let scanResponse = LEAdvertisingEventType(rawValue: 0x04)  // SCAN_RSP

    /// True for ADV_IND and ADV_DIRECT_IND. A SCAN_RSP does not say: remember it from the
    /// advertiser's ADV_IND.
    public var isConnectable: Bool { rawValue <= 0x01 }

    public var description: String {
        switch rawValue {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND"
        case 2: return "ADV_SCAN_IND"
        case 3: return "ADV_NONCONN_IND"
        case 4: return "SCAN_RSP"
        default: return "event type \(rawValue)"
        }
    }
}

/// One report of an LE Advertising Report event. `data` shares the event's storage.
public struct LEAdvertisingReport: Hashable, Sendable {
    public var eventType: LEAdvertisingEventType
    public var addressType: AddressType
    public var address: BluetoothAddress
    /// The advertising (or scan response) data: AD structures, see ``advertisingData``.
    public var data: ArraySlice<UInt8>
    /// Raw RSSI in dBm (−127…+20); 127 means the controller has no value.
    public var rawRSSI: Int8

    public init(
        eventType: LEAdvertisingEventType, addressType: AddressType, address: BluetoothAddress,
        data: ArraySlice<UInt8>, rawRSSI: Int8
    ) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.data = data
        self.rawRSSI = rawRSSI
    }

    /// RSSI in dBm, nil when unavailable (127, as btvirt always reports).
    public var rssi: Int8? { rawRSSI == 127 ? nil : rawRSSI }

    /// The AD structures of ``data``.
    public var advertisingData: AdvertisingData { AdvertisingData(data) }

    /// Reads one report in the sequential record layout used by controllers (and BlueZ):
    /// event type, address type, address, data length, data, RSSI.
    static func read(from r: inout ByteReader) throws(DecodeError) -> LEAdvertisingReport {
        let eventType = LEAdvertisingEventType(rawValue: try r.readU8("Event_Type"))
        let addressType = AddressType(rawValue: try r.readU8("Address_Type"))
        let address = try r.readAddress("Address")
        let length = Int(try r.readU8("Data_Length"))
        let data = try r.readBytes(length, "Data")
        let rssi = try r.readI8("RSSI")
        return LEAdvertisingReport(eventType: eventType, addressType: addressType, address: address, data: data, rawRSSI: rssi)
    }
}

/// The reports of one LE Advertising Report event (subevent 0x02). Validated when decoded;
/// iterating it allocates nothing: each report's data is a slice of the event.
public struct LEAdvertisingReports: Hashable, Sendable, Sequence {
    /// Num_Reports as the event states it (and as validated).
    public let count: Int
    /// The report records after Num_Reports.
    public let records: ArraySlice<UInt8>

    /// Throws if a report is truncated or bytes are left after the stated number of reports.
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        count = Int(try r.readU8("Num_Reports"))
        records = r.bytes
        for _ in 0..<count { _ = try LEAdvertisingReport.read(from: &r) }
        try r.expectEnd("advertising reports")
    }

    public struct Iterator: IteratorProtocol {
        var reader: ByteReader
        var left: Int

        public mutating func next() -> LEAdvertisingReport? {
            guard left > 0, let report = try? LEAdvertisingReport.read(from: &reader) else { return nil }
            left -= 1
            return report
        }
    }

    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(records), left: count) }
    public var underestimatedCount: Int { count }
}

// MARK: The controller side

extension LEAdvertisingReport {
    /// Bytes of this report's record: event type, address type, address, data length, data, RSSI.
    public var recordSize: Int { 10 + data.count }

    /// Appends the record in the sequential layout ``read(from:)`` reads.
    public func append(to bytes: inout [UInt8]) {
        bytes.append(eventType.rawValue)
        bytes.append(addressType.rawValue)
        address.append(to: &bytes)
        bytes.append(UInt8(truncatingIfNeeded: data.count))
        bytes.append(contentsOf: data)
        bytes.appendI8(rawRSSI)
    }
}

extension LEAdvertisingReports {
    /// Room for report records in one event: 255 parameter bytes less subevent and Num_Reports.
    public static let maximumRecordBytes = HCIEventCode.maximumParameterLength - 2

    /// One LE Advertising Report event with `reports`, whose records must fit
    /// ``maximumRecordBytes`` together (a controller starts a new event when the next would not).
    public static func packet(_ reports: [LEAdvertisingReport]) -> H4Packet {
        var p: [UInt8] = [UInt8(truncatingIfNeeded: reports.count)]
        for report in reports { report.append(to: &p) }
        return LEMetaEvent.packet(subevent: LEMetaEvent.Subevent.advertisingReport, parameters: p)
    }
}
