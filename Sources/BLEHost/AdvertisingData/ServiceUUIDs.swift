/// All service UUIDs listed in advertising data (AD types 0x02–0x07), in order. Iterating and
/// ``contains(_:)`` allocate nothing. A list whose length is not a multiple of its UUID width
/// yields its whole UUIDs and skips the tail.
public struct ServiceUUIDs: Sequence, Sendable {
    let data: AdvertisingData

    public struct Iterator: IteratorProtocol {
        var structures: AdvertisingData.Iterator
        var list: ArraySlice<UInt8> = []
        var width = 2
        /// True if the current UUID comes from a complete list.
        public private(set) var isComplete = false

        public mutating func next() -> BluetoothUUID? {
            while list.count < width {
                guard let structure = structures.next() else { return nil }
                guard let w = structure.type.serviceUUIDWidth else { continue }
                width = w
                list = structure.data
                isComplete = structure.type.rawValue & 1 == 1
            }
            let uuidBytes = list.prefix(width)
            list = list.dropFirst(width)
            return try? BluetoothUUID(littleEndianBytes: uuidBytes)
        }
    }

    public func makeIterator() -> Iterator { Iterator(structures: data.makeIterator()) }

    /// True if any list names this UUID (a 16-bit alias matches its 32- and 128-bit forms).
    public func contains(_ uuid: BluetoothUUID) -> Bool {
        for listed in self where listed == uuid { return true }
        return false
    }
}

/// One service data structure: the service UUID and the payload after it.
public struct ServiceData: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var data: ArraySlice<UInt8>
}

/// All service data structures (AD types 0x16, 0x20, 0x21) in advertising data. Structures too
/// short for their UUID are skipped.
public struct ServiceDataSequence: Sequence, Sendable {
    let data: AdvertisingData

    public struct Iterator: IteratorProtocol {
        var structures: AdvertisingData.Iterator

        public mutating func next() -> ServiceData? {
            while let structure = structures.next() {
                guard let width = structure.type.serviceDataUUIDWidth, structure.data.count >= width,
                    let uuid = try? BluetoothUUID(littleEndianBytes: structure.data.prefix(width))
                else { continue }
                return ServiceData(uuid: uuid, data: structure.data.dropFirst(width))
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(structures: data.makeIterator()) }
}

/// One manufacturer specific data structure: the company identifier and the payload after it.
public struct ManufacturerData: Hashable, Sendable {
    /// Bluetooth SIG company identifier, e.g. 0x004C Apple.
    public var companyID: UInt16
    public var data: ArraySlice<UInt8>
}

/// All manufacturer specific data structures (AD type 0xFF). Structures shorter than a company
/// identifier are skipped.
public struct ManufacturerDataSequence: Sequence, Sendable {
    let data: AdvertisingData

    public struct Iterator: IteratorProtocol {
        var structures: AdvertisingData.Iterator

        public mutating func next() -> ManufacturerData? {
            while let structure = structures.next() {
                guard structure.type == .manufacturerSpecificData, structure.data.count >= 2 else { continue }
                let i = structure.data.startIndex
                let company = UInt16(structure.data[i]) | UInt16(structure.data[i + 1]) << 8
                return ManufacturerData(companyID: company, data: structure.data.dropFirst(2))
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(structures: data.makeIterator()) }
}
