/// A read-only view of advertising or scan response data: a run of AD structures
/// (`length | type | data`, where length counts type and data). Walking it allocates nothing.
///
/// A zero length ends the data (the rest is padding). A length that runs past the end is
/// malformed: the walk stops there, the structures before it are still served, and
/// ``malformation`` says what went wrong. Nothing here traps on bad input.
public struct AdvertisingData: Hashable, Sendable, Sequence {
    public let bytes: ArraySlice<UInt8>

    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// One AD structure; `data` is a slice of the advertising data.
    public struct Structure: Hashable, Sendable {
        public var type: ADType
        public var data: ArraySlice<UInt8>
    }

    public struct Iterator: IteratorProtocol {
        var rest: ArraySlice<UInt8>
        /// Set when the walk ended at a malformed structure.
        public private(set) var malformation: DecodeError?

        public mutating func next() -> Structure? {
            guard let lengthByte = rest.first, lengthByte != 0 else { return nil }
            let length = Int(lengthByte)
            let start = rest.startIndex
            guard rest.count > length else {
                malformation = DecodeError(
                    .truncated, field: "AD structure",
                    detail: "length \(length) at offset \(start) with \(rest.count - 1) bytes left")
                rest = rest.suffix(0)
                return nil
            }
            let structure = Structure(type: ADType(rawValue: rest[start + 1]), data: rest[(start + 2)..<(start + 1 + length)])
            rest = rest[(start + 1 + length)...]
            return structure
        }
    }

    public func makeIterator() -> Iterator { Iterator(rest: bytes) }

    /// Why the walk stops early, or nil if every structure is well formed.
    public var malformation: DecodeError? {
        var iterator = makeIterator()
        while iterator.next() != nil {}
        return iterator.malformation
    }

    /// The data of the first structure of this type.
    public func first(_ type: ADType) -> ArraySlice<UInt8>? {
        for structure in self where structure.type == type { return structure.data }
        return nil
    }

    // MARK: Typed accessors

    public var flags: ADFlags? {
        guard let data = first(.flags), let byte = data.first else { return nil }
        return ADFlags(rawValue: byte)
    }

    /// TX power level in dBm.
    public var txPowerLevel: Int8? {
        guard let data = first(.txPowerLevel), let byte = data.first else { return nil }
        return Int8(bitPattern: byte)
    }

    /// The complete local name if present, else the shortened one.
    public var localName: LocalName? {
        var shortened: ArraySlice<UInt8>? = nil
        for structure in self {
            if structure.type == .completeLocalName { return LocalName(bytes: structure.data, isComplete: true) }
            if structure.type == .shortenedLocalName, shortened == nil { shortened = structure.data }
        }
        return shortened.map { LocalName(bytes: $0, isComplete: false) }
    }

    /// Every service UUID of every 16-, 32- and 128-bit list, complete or not.
    public var serviceUUIDs: ServiceUUIDs { ServiceUUIDs(data: self) }

    /// Every service data structure (16-, 32- or 128-bit UUID, then the payload).
    public var serviceData: ServiceDataSequence { ServiceDataSequence(data: self) }

    /// Every manufacturer specific data structure (company identifier, then the payload).
    public var manufacturerData: ManufacturerDataSequence { ManufacturerDataSequence(data: self) }

    /// The payload of the first service data structure for this UUID.
    public func serviceData(for uuid: BluetoothUUID) -> ArraySlice<UInt8>? {
        for entry in serviceData where entry.uuid == uuid { return entry.data }
        return nil
    }

    /// The payload of the first manufacturer data structure of this company.
    public func manufacturerData(company: UInt16) -> ArraySlice<UInt8>? {
        for entry in manufacturerData where entry.companyID == company { return entry.data }
        return nil
    }
}

/// A local name AD structure: UTF-8 bytes that may be cut anywhere.
public struct LocalName: Hashable, Sendable {
    public var bytes: ArraySlice<UInt8>
    /// False for a shortened name.
    public var isComplete: Bool
    /// The name as text; invalid UTF-8 becomes U+FFFD.
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}
