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
}

/// The reports of one LE Advertising Report event (subevent 0x02). Validated when decoded;
/// iterating it allocates nothing: each report's data is a slice of the event.
///
/// This runs for every report the controller delivers (thousands a second in a crowd), so both
/// validation and iteration work on indices over the event's bytes: validation only walks the
/// records by their lengths, and iteration reads the validated fields directly.
public struct LEAdvertisingReports: Hashable, Sendable, Sequence {
    /// Num_Reports as the event states it (and as validated).
    public let count: Int
    /// The report records after Num_Reports.
    public let records: ArraySlice<UInt8>

    /// Bytes of a record without its data: event type, address type, address (6), data length, RSSI.
    static let recordOverhead = 10

    /// Throws if a report is truncated or bytes are left after the stated number of reports.
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        count = Int(try r.readU8("Num_Reports"))
        records = r.bytes
        var i = records.startIndex
        let end = records.endIndex
        for _ in 0..<count {
            guard end - i >= Self.recordOverhead else {
                throw DecodeError(.truncated, field: "advertising report", detail: "needs \(Self.recordOverhead) bytes, \(end - i) left")
            }
            let next = i + Self.recordOverhead + Int(records[i + 8])
            guard next <= end else {
                throw DecodeError(.truncated, field: "Data", detail: "needs \(records[i + 8]) bytes and RSSI, \(end - i - 9) left")
            }
            i = next
        }
        if i != end {
            throw DecodeError(.lengthMismatch, field: "advertising reports", detail: "\(end - i) unexpected trailing bytes")
        }
    }

    public struct Iterator: IteratorProtocol {
        let records: ArraySlice<UInt8>
        var position: Int
        var left: Int

        public mutating func next() -> LEAdvertisingReport? {
            let i = position
            // The records were validated; the guard only keeps a hand-built value from trapping.
            guard left > 0, records.endIndex - i >= LEAdvertisingReports.recordOverhead else { return nil }
            let length = Int(records[i + 8])
            let dataEnd = i + 9 + length
            guard dataEnd < records.endIndex else { return nil }
            var address: UInt64 = 0
            for k in (0..<6).reversed() { address = address << 8 | UInt64(records[i + 2 + k]) }
            left -= 1
            position = dataEnd + 1
            return LEAdvertisingReport(
                eventType: LEAdvertisingEventType(rawValue: records[i]), addressType: AddressType(rawValue: records[i + 1]),
                address: BluetoothAddress(rawValue: address), data: records[(i + 9)..<dataEnd],
                rawRSSI: Int8(bitPattern: records[dataEnd]))
        }
    }

    public func makeIterator() -> Iterator { Iterator(records: records, position: records.startIndex, left: count) }
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
