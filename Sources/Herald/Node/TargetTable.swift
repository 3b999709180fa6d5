import BLEHost

/// The targets the node follows, found by their current address and by their pseudo device
/// address (which survives an Android phone's address rotation).
struct TargetTable: Sendable {
    private(set) var records: [TargetID: TargetRecord] = [:]
    private var byAddress: [BluetoothAddress: TargetID] = [:]
    private var byPseudo: [PseudoDeviceAddress: TargetID] = [:]
    private var nextID: UInt64 = 1

    var count: Int { records.count }

    subscript(id: TargetID) -> TargetRecord? {
        get { records[id] }
        _modify { yield &records[id] }
    }

    /// Changes a record in place with one lookup (per advert this is the hot path: reading
    /// through ``subscript(_:)`` copies the whole record, and each optional-chained write looks
    /// the target up again).
    mutating func update<R>(_ id: TargetID, _ body: (inout TargetRecord) -> R) -> R? {
        guard let index = records.index(forKey: id) else { return nil }
        return body(&records.values[index])
    }

    /// Visits every record in place. Through the dictionary's modify accessor: reading a record
    /// through its getter copies it, arrays and all (retains and a memmove per record, which
    /// made a tick over a large table slow).
    mutating func forEach(_ body: (TargetID, inout TargetRecord) -> Void) {
        var index = records.startIndex
        while index != records.endIndex {
            body(records.keys[index], &records.values[index])
            records.formIndex(after: &index)
        }
    }

    func id(address: BluetoothAddress) -> TargetID? { byAddress[address] }

    /// The target seen at this address or with this pseudo address. A target found by its pseudo
    /// address at a new address moves there: the old address no longer leads to it.
    mutating func find(address: BluetoothAddress, addressType: AddressType, pseudo: PseudoDeviceAddress?) -> TargetID? {
        if let pseudo, let id = byPseudo[pseudo] {
            if let old = records[id]?.target.address, old != address {
                if byAddress[old] == id { byAddress[old] = nil }
                byAddress[address] = id
                records[id]?.target.address = address
                records[id]?.target.addressType = addressType
            }
            return id
        }
        guard let id = byAddress[address] else { return nil }
        if let pseudo {
            // First pseudo address for this target, or a new one (Herald renews it when the
            // phone restarts advertising): index it.
            if let old = records[id]?.target.pseudoAddress, byPseudo[old] == id { byPseudo[old] = nil }
            records[id]?.target.pseudoAddress = pseudo
            byPseudo[pseudo] = id
        }
        return id
    }

    mutating func insert(address: BluetoothAddress, addressType: AddressType, pseudo: PseudoDeviceAddress?, source: TargetRecord.Source, now: Double) -> TargetID {
        let id = TargetID(rawValue: nextID)
        nextID += 1
        let target = Target(id: id, address: address, addressType: addressType, pseudoAddress: pseudo)
        records[id] = TargetRecord(target: target, source: source, now: now)
        byAddress[address] = id
        if let pseudo { byPseudo[pseudo] = id }
        return id
    }

    mutating func remove(_ id: TargetID) {
        guard let record = records.removeValue(forKey: id) else { return }
        if byAddress[record.target.address] == id { byAddress[record.target.address] = nil }
        if let pseudo = record.target.pseudoAddress, byPseudo[pseudo] == id { byPseudo[pseudo] = nil }
    }

    var ids: Dictionary<TargetID, TargetRecord>.Keys { records.keys }
    var values: Dictionary<TargetID, TargetRecord>.Values { records.values }
}
