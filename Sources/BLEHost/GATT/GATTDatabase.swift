/// The local GATT database: an array of attributes with handles assigned sequentially from 1,
/// built from declarative service descriptions. Handle 1 is the GAP service (0x1800: Device Name,
/// Appearance), then the GATT service (0x1801: Service Changed with its CCCD), then the
/// application's services in order.
///
/// A value shared by every link; per-link state (MTU, CCCD values, prepared writes) lives in
/// ``GATTServer``.
public struct GATTDatabase: Hashable, Sendable {
    /// The longest attribute value ATT allows (Core Vol 3 Part F 3.2.9).
    public static let maximumValueLength = 512

    /// Indexed by handle − 1.
    public private(set) var attributes: [GATTAttribute] = []
    public private(set) var characteristics: [GATTCharacteristic] = []
    private var characteristicIndexByValueHandle: [UInt16: Int] = [:]

    public init(
        deviceName: String, appearance: UInt16 = 0x0000, services: [GATTServiceDescription]
    ) throws(GATTDatabaseError) {
        var appearanceBytes = [UInt8]()
        appearanceBytes.appendLE16(appearance)
        let gap = GATTServiceDescription(
            uuid: GATTUUID.genericAccessService,
            characteristics: [
                .init(uuid: GATTUUID.deviceName, properties: .read, value: .fixed(Array(deviceName.utf8))),
                .init(uuid: GATTUUID.appearance, properties: .read, value: .fixed(appearanceBytes)),
            ])
        // Service Changed: indicate only, value not readable; the range would be 0x0001–0xFFFF.
        let gatt = GATTServiceDescription(
            uuid: GATTUUID.genericAttributeService,
            characteristics: [
                .init(uuid: GATTUUID.serviceChanged, properties: .indicate, value: .fixed([0x01, 0x00, 0xFF, 0xFF]))
            ])
        for service in [gap, gatt] + services { try add(service) }
    }

    /// The attribute with this handle, if any.
    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        let index = Int(handle) - 1
        return attributes.indices.contains(index) ? attributes[index] : nil
    }

    /// Attributes with handles in `start...end` (either bound may lie outside the database).
    public func attributes(from start: UInt16, through end: UInt16) -> ArraySlice<GATTAttribute> {
        let lower = max(Int(start), 1) - 1
        let upper = min(Int(end), attributes.count)
        return lower < upper ? attributes[lower..<upper] : []
    }

    public func characteristic(valueHandle: UInt16) -> GATTCharacteristic? {
        characteristicIndexByValueHandle[valueHandle].map { characteristics[$0] }
    }

    /// The first characteristic `uuid` in the first service `service`.
    public func characteristic(service: BluetoothUUID, uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.service == service && $0.uuid == uuid }
    }

    /// The Service Changed characteristic of the GATT service.
    public var serviceChanged: GATTCharacteristic? {
        characteristic(service: GATTUUID.genericAttributeService, uuid: GATTUUID.serviceChanged)
    }

    /// Replaces the value of a dynamic characteristic. The caller then tells each link's
    /// ``GATTConnection`` so subscribed clients are notified.
    public mutating func setValue(_ value: [UInt8], forCharacteristic valueHandle: UInt16) throws(GATTDatabaseError) {
        guard let attribute = attribute(valueHandle), case .characteristicValue(isDynamic: true) = attribute.role else {
            throw .notDynamic(handle: valueHandle)
        }
        guard value.count <= Self.maximumValueLength else { throw .valueTooLong(attribute.type, length: value.count) }
        attributes[Int(valueHandle) - 1].value = value
    }

    private mutating func append(_ type: BluetoothUUID, _ permissions: ATTPermissions, _ value: [UInt8], _ role: GATTAttribute.Role)
        throws(GATTDatabaseError) -> UInt16
    {
        guard attributes.count < Int(UInt16.max) else { throw .tooManyAttributes }
        guard value.count <= Self.maximumValueLength else { throw .valueTooLong(type, length: value.count) }
        let handle = UInt16(attributes.count + 1)
        attributes.append(GATTAttribute(handle: handle, type: type, permissions: permissions, value: value, role: role))
        return handle
    }

    private mutating func add(_ service: GATTServiceDescription) throws(GATTDatabaseError) {
        var uuidBytes = [UInt8]()
        service.uuid.appendShortestForm(to: &uuidBytes)
        let serviceHandle = try append(GATTUUID.primaryService, .read, uuidBytes, .primaryService(endGroupHandle: 0))
        for description in service.characteristics {
            let declarationHandle = UInt16(attributes.count + 1)
            var declaration: [UInt8] = [description.properties.rawValue]
            declaration.appendLE16(declarationHandle &+ 1)
            description.uuid.appendShortestForm(to: &declaration)
            _ = try append(GATTUUID.characteristic, .read, declaration, .characteristicDeclaration)

            var permissions: ATTPermissions = []
            if description.properties.contains(.read) { permissions.insert(.read) }
            if !description.properties.isDisjoint(with: [.write, .writeWithoutResponse]) { permissions.insert(.write) }
            let valueHandle: UInt16
            switch description.value {
            case .fixed(let bytes):
                valueHandle = try append(description.uuid, permissions, bytes, .characteristicValue(isDynamic: false))
            case .dynamic(let initial):
                valueHandle = try append(description.uuid, permissions, initial, .characteristicValue(isDynamic: true))
            }
            var cccdHandle: UInt16? = nil
            if !description.properties.isDisjoint(with: [.notify, .indicate]) {
                cccdHandle = try append(
                    GATTUUID.clientCharacteristicConfiguration, [.read, .write], [],
                    .clientConfiguration(characteristicValueHandle: valueHandle))
            }
            if let text = description.userDescription {
                _ = try append(GATTUUID.characteristicUserDescription, .read, Array(text.utf8), .descriptor)
            }
            characteristicIndexByValueHandle[valueHandle] = characteristics.count
            characteristics.append(
                GATTCharacteristic(
                    service: service.uuid, uuid: description.uuid, properties: description.properties,
                    declarationHandle: declarationHandle, valueHandle: valueHandle,
                    clientConfigurationHandle: cccdHandle, endHandle: UInt16(attributes.count)))
        }
        attributes[Int(serviceHandle) - 1].role = .primaryService(endGroupHandle: UInt16(attributes.count))
    }
}

/// Why a database could not be built or a value not set.
public enum GATTDatabaseError: Error, Hashable, Sendable {
    /// More than 65535 attributes.
    case tooManyAttributes
    /// A value longer than 512 bytes, for the attribute of this type.
    case valueTooLong(BluetoothUUID, length: Int)
    /// `setValue` on a handle that is not a dynamic characteristic value.
    case notDynamic(handle: UInt16)
}
