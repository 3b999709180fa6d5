/// A GATT client procedure (Core Vol 3 Part G 4) as a pure state machine: it says which request
/// to send next and consumes the response to it, until it finishes with a result. Run it with
/// ``GATTConnection/start(_:now:)``, which carries its requests over the link's ``ATTBearer``.
public struct GATTClientProcedure: Sendable {
    /// What the procedure wants next.
    enum Step: Hashable, Sendable {
        case send(ATTPDU)
        case finished(Result<GATTClientResult, GATTClientError>)
    }

    /// What to do once the discovery part is over.
    private enum Goal: Hashable, Sendable {
        case report
        case read(BluetoothUUID)
        case write(BluetoothUUID, [UInt8])
        case subscribe(GATTClientConfiguration)
        /// A composite discovery (``discover(_:exchangingMTU:)``) and how far it got.
        case discover(Discovery)
    }

    /// The state of a composite discovery: the groups of alternative services still to look
    /// for, the service whose characteristics are being read, and what was found.
    private struct Discovery: Hashable, Sendable {
        var groups: [[BluetoothUUID]]
        /// The group and the alternative within it being looked for.
        var group = 0
        var alternative = 0
        var service: GATTDiscoveredService?
        var result: GATTDiscovery

        /// The service to look for next, if any.
        var wanted: BluetoothUUID? {
            group < groups.count && alternative < groups[group].count ? groups[group][alternative] : nil
        }

        /// The wanted service is not on the peer: its next alternative, else the next group.
        mutating func notFound() {
            alternative += 1
            if alternative >= groups[group].count { nextGroup() }
        }

        mutating func nextGroup() {
            group += 1
            alternative = 0
            service = nil
        }
    }

    private enum Phase: Hashable, Sendable {
        case exchangeMTU(clientRxMTU: Int)
        case findServiceByValue(BluetoothUUID)
        /// Read By Group Type loop; `target` nil discovers every primary service.
        case findServiceByGroup(target: BluetoothUUID?, next: UInt16, found: [GATTDiscoveredService])
        case findCharacteristics(next: UInt16, end: UInt16, found: [GATTDiscoveredCharacteristic])
        case findDescriptors(next: UInt16, end: UInt16, found: [GATTDiscoveredDescriptor])
        /// Read, then Read Blob while each part fills a response.
        case read(handle: UInt16, value: [UInt8], blob: Bool)
        case write(handle: UInt16, value: [UInt8])
        /// Long write: `part` was sent at `offset` and must come back unchanged.
        case prepareWrite(handle: UInt16, value: [UInt8], offset: Int, part: [UInt8])
        case executeWrite
        /// Discarding prepared parts after a failure, then reporting it.
        case cancelWrite(GATTClientError)
        /// A composed procedure that has already finished when it starts (nothing to send).
        case failed(GATTClientError)
    }

    private var phase: Phase
    private var goal: Goal

    private static let declarationTypes: Set<BluetoothUUID> = [
        GATTUUID.primaryService, GATTUUID.secondaryService, GATTUUID.include, GATTUUID.characteristic,
    ]

    private init(_ phase: Phase, goal: Goal = .report) {
        self.phase = phase
        self.goal = goal
    }

    // MARK: Procedures

    /// Exchange MTU: offers `clientRxMTU` (23...517); yields the ATT_MTU in force afterwards.
    public static func exchangeMTU(clientRxMTU: Int = ATTBearer.maximumMTU) -> Self {
        Self(.exchangeMTU(clientRxMTU: min(max(clientRxMTU, ATTBearer.defaultMTU), ATTBearer.maximumMTU)))
    }

    /// Discover a primary service by UUID (Find By Type Value; Read By Group Type if the peer
    /// does not support that); yields the first instance, or fails with `serviceNotFound`.
    public static func discoverPrimaryService(_ uuid: BluetoothUUID) -> Self {
        Self(.findServiceByValue(uuid))
    }

    /// Discover all primary services (Read By Group Type loop).
    public static func discoverAllPrimaryServices() -> Self {
        Self(.findServiceByGroup(target: nil, next: 0x0001, found: []))
    }

    /// Discover all characteristics declared in `start...end` (Read By Type 0x2803 loop until
    /// "Attribute Not Found" or the end of the range).
    public static func discoverCharacteristics(from start: UInt16, through end: UInt16) -> Self {
        Self(.findCharacteristics(next: max(start, 1), end: end, found: []))
    }

    /// Discover all descriptors in `start...end` (Find Information loop).
    public static func discoverDescriptors(from start: UInt16, through end: UInt16) -> Self {
        Self(.findDescriptors(next: max(start, 1), end: end, found: []))
    }

    /// Read a whole value: Read, then Read Blob while each part is ATT_MTU − 1 bytes long
    /// (up to the 512-byte limit of an attribute value).
    public static func read(_ handle: UInt16) -> Self {
        Self(.read(handle: handle, value: [], blob: false))
    }

    /// Write with response: Write Request when the value fits, otherwise a long write with
    /// Prepare Write parts checked against their echoes, then Execute Write.
    public static func write(_ value: [UInt8], to handle: UInt16) -> Self {
        Self(.write(handle: handle, value: value))
    }

    /// Subscribe: find the CCCD among the characteristic's descriptors (from `valueHandle + 1`
    /// up to the next declaration or `endHandle`, which may be 0xFFFF when unknown) and write
    /// `configuration` to it (empty unsubscribes).
    public static func subscribe(
        valueHandle: UInt16, endHandle: UInt16, configuration: GATTClientConfiguration = .notify
    ) -> Self {
        guard valueHandle < endHandle else {
            return Self(.failed(.descriptorNotFound(GATTUUID.clientCharacteristicConfiguration)))
        }
        return Self(.findDescriptors(next: valueHandle + 1, end: endHandle, found: []), goal: .subscribe(configuration))
    }

    /// Discover service `service`, find characteristic `characteristic` in it and read its
    /// whole value (what the Herald node does with a phone's payload).
    public static func readCharacteristic(_ characteristic: BluetoothUUID, inService service: BluetoothUUID) -> Self {
        Self(.findServiceByValue(service), goal: .read(characteristic))
    }

    /// Discovery in one procedure, as a client that knows what it looks for does it: an MTU
    /// exchange first (when asked; a peer that refuses it talks at 23 bytes), then for each group
    /// of `services` the first alternative the peer has (Find By Type Value, as
    /// ``discoverPrimaryService(_:)``) and that service's characteristics. A group none of whose
    /// services the peer has is left out of the result, which is not a failure; an ATT error
    /// other than "not found", a malformed response, a timeout or the link closing fails it.
    /// What the Herald node does with a phone: `[[0xFCF6, legacy]]`, plus `[OpenTrace]` when it
    /// also reads OpenTrace.
    public static func discover(_ services: [[BluetoothUUID]], exchangingMTU: Bool = true) -> Self {
        let discovery = Discovery(groups: services.filter { !$0.isEmpty }, result: GATTDiscovery(mtu: ATTBearer.defaultMTU, services: []))
        let goal = Goal.discover(discovery)
        if exchangingMTU { return Self(.exchangeMTU(clientRxMTU: ATTBearer.maximumMTU), goal: goal) }
        return Self(.findServiceByValue(discovery.wanted ?? GATTUUID.primaryService), goal: goal)
    }

    /// Discover service `service`, find characteristic `characteristic` in it and write `value`
    /// to it with response (long values with prepared writes).
    public static func writeCharacteristic(
        _ characteristic: BluetoothUUID, inService service: BluetoothUUID, value: [UInt8]
    ) -> Self {
        Self(.findServiceByValue(service), goal: .write(characteristic, value))
    }

    // MARK: Running

    /// The first request (or an immediate result).
    mutating func start(mtu: Int) -> Step {
        if case .discover(var discovery) = goal {
            discovery.result.mtu = mtu
            goal = .discover(discovery)
            if case .findServiceByValue = phase { return nextService(discovery, mtu: mtu) }
        }
        return enter(phase, mtu: mtu)
    }

    /// Consumes the response (or Error Response) to the last request sent.
    mutating func receive(_ response: ATTPDU, mtu: Int) -> Step {
        if case .errorResponse(let error) = response { return receiveError(error, mtu: mtu) }
        switch (phase, response) {
        case (.exchangeMTU(let rx), .exchangeMTUResponse(let r)):
            let effective = ATTBearer.effectiveMTU(rx, Int(r.serverRxMTU))
            if case .discover(var discovery) = goal {
                discovery.result.mtu = effective
                return nextService(discovery, mtu: effective)
            }
            return .finished(.success(.mtu(effective)))

        case (.findServiceByValue(let uuid), .findByTypeValueResponse(let r)):
            guard let first = r.entries.first, first.groupEndHandle >= first.foundHandle, first.foundHandle != 0 else {
                return invalid("service handle range")
            }
            return serviceFound(GATTDiscoveredService(uuid: uuid, startHandle: first.foundHandle, endHandle: first.groupEndHandle), mtu: mtu)

        case (.findServiceByGroup(let target, let next, var found), .readByGroupTypeResponse(let r)):
            var last = next
            for entry in r.entries {
                guard entry.handle >= next, entry.groupEndHandle >= entry.handle,
                    entry.value.count == 2 || entry.value.count == 16,
                    let uuid = try? BluetoothUUID(littleEndianBytes: entry.value)
                else { return invalid("service entry") }
                let service = GATTDiscoveredService(uuid: uuid, startHandle: entry.handle, endHandle: entry.groupEndHandle)
                if let target, target == uuid { return serviceFound(service, mtu: mtu) }
                found.append(service)
                last = entry.groupEndHandle
            }
            guard last < 0xFFFF else { return servicesDone(target, found, mtu: mtu) }
            return enter(.findServiceByGroup(target: target, next: last + 1, found: found), mtu: mtu)

        case (.findCharacteristics(let next, let end, var found), .readByTypeResponse(let r)):
            var last = next
            for entry in r.entries {
                var reader = ByteReader(entry.value)
                guard entry.handle >= next, entry.handle <= end,
                    let properties = try? reader.readU8(), let valueHandle = try? reader.readLE16(),
                    reader.remaining == 2 || reader.remaining == 16,
                    let uuid = try? BluetoothUUID(littleEndianBytes: reader.readRest())
                else { return invalid("characteristic declaration") }
                let characteristic = GATTDiscoveredCharacteristic(
                    uuid: uuid, properties: GATTCharacteristicProperties(rawValue: properties),
                    declarationHandle: entry.handle, valueHandle: valueHandle)
                switch goal {
                case .read(let wanted) where wanted == uuid:
                    return enter(.read(handle: valueHandle, value: [], blob: false), mtu: mtu)
                case .write(let wanted, let value) where wanted == uuid:
                    return enter(.write(handle: valueHandle, value: value), mtu: mtu)
                default:
                    found.append(characteristic)
                }
                last = entry.handle
            }
            guard last < end else { return characteristicsDone(found) }
            return enter(.findCharacteristics(next: last + 1, end: end, found: found), mtu: mtu)

        case (.findDescriptors(let next, let end, var found), .findInformationResponse(let r)):
            var last = next
            for entry in r.entries {
                guard entry.handle >= next, entry.handle <= end else { return invalid("descriptor handle") }
                // Subscribing: the characteristic's descriptors end at the next declaration.
                if case .subscribe = goal, Self.declarationTypes.contains(entry.type) {
                    return descriptorsDone(found, mtu: mtu)
                }
                found.append(GATTDiscoveredDescriptor(handle: entry.handle, uuid: entry.type))
                last = entry.handle
            }
            guard last < end else { return descriptorsDone(found, mtu: mtu) }
            return enter(.findDescriptors(next: last + 1, end: end, found: found), mtu: mtu)

        case (.read(let handle, let value, false), .readResponse(let r)):
            return readPart(handle, value, r.value, mtu: mtu)
        case (.read(let handle, let value, true), .readBlobResponse(let r)):
            return readPart(handle, value, r.value, mtu: mtu)

        case (.write, .writeResponse), (.executeWrite, .executeWriteResponse):
            return .finished(.success(.written))

        case (.prepareWrite(let handle, let value, let offset, let part), .prepareWriteResponse(let r)):
            guard r.handle == handle, Int(r.offset) == offset, r.value == part else {
                return enter(.cancelWrite(.invalidResponse("prepared write echoed wrongly")), mtu: mtu)
            }
            let next = offset + part.count
            guard next < value.count else { return enter(.executeWrite, mtu: mtu) }
            return enter(.prepareWrite(handle: handle, value: value, offset: next, part: []), mtu: mtu)

        case (.cancelWrite(let error), _):
            return .finished(.failure(error))

        default:
            return invalid("unexpected \(response.opcode) response")
        }
    }

    private mutating func receiveError(_ error: ATTErrorResponse, mtu: Int) -> Step {
        let failure = GATTClientError.att(error.error, request: error.requestOpcode, handle: error.handle)
        if case .discover(var discovery) = goal {
            switch (phase, error.error) {
            case (.exchangeMTU, _):
                // A peer that refuses the exchange still talks at 23 bytes.
                return nextService(discovery, mtu: mtu)
            case (.findServiceByValue, .attributeNotFound), (.findServiceByGroup, .attributeNotFound):
                discovery.notFound()
                return nextService(discovery, mtu: mtu)
            default:
                break
            }
        }
        switch (phase, error.error) {
        case (.findServiceByValue(let uuid), .requestNotSupported):
            return enter(.findServiceByGroup(target: uuid, next: 0x0001, found: []), mtu: mtu)
        case (.findServiceByValue(let uuid), .attributeNotFound):
            return .finished(.failure(.serviceNotFound(uuid)))
        case (.findServiceByGroup(let target, _, let found), .attributeNotFound):
            return servicesDone(target, found, mtu: mtu)
        case (.findCharacteristics(_, _, let found), .attributeNotFound):
            return characteristicsDone(found)
        case (.findDescriptors(_, _, let found), .attributeNotFound):
            return descriptorsDone(found, mtu: mtu)
        case (.read(_, let value, true), .attributeNotLong), (.read(_, let value, true), .invalidOffset):
            // The previous part happened to fill a response exactly; there is no more.
            return .finished(.success(.value(value)))
        case (.prepareWrite, _):
            return enter(.cancelWrite(failure), mtu: mtu)
        case (.cancelWrite(let original), _):
            return .finished(.failure(original))
        default:
            return .finished(.failure(failure))
        }
    }

    /// Moves to `next` and produces its request.
    private mutating func enter(_ next: Phase, mtu: Int) -> Step {
        phase = next
        switch next {
        case .exchangeMTU(let rx):
            return .send(.exchangeMTURequest(ATTExchangeMTURequest(clientRxMTU: UInt16(rx))))
        case .findServiceByValue(let uuid):
            var value = [UInt8]()
            uuid.appendShortestForm(to: &value)
            return .send(.findByTypeValueRequest(ATTFindByTypeValueRequest(
                startHandle: 0x0001, endHandle: 0xFFFF, attributeType: 0x2800, value: value)))
        case .findServiceByGroup(_, let next, _):
            return .send(.readByGroupTypeRequest(ATTReadByGroupTypeRequest(
                startHandle: next, endHandle: 0xFFFF, groupType: GATTUUID.primaryService)))
        case .findCharacteristics(let start, let end, let found):
            guard start <= end else { return characteristicsDone(found) }
            return .send(.readByTypeRequest(ATTReadByTypeRequest(
                startHandle: start, endHandle: end, attributeType: GATTUUID.characteristic)))
        case .findDescriptors(let start, let end, let found):
            guard start <= end else { return descriptorsDone(found, mtu: mtu) }
            return .send(.findInformationRequest(ATTFindInformationRequest(startHandle: start, endHandle: end)))
        case .read(let handle, let value, let blob):
            guard blob else { return .send(.readRequest(ATTReadRequest(handle: handle))) }
            return .send(.readBlobRequest(ATTReadBlobRequest(handle: handle, offset: UInt16(value.count))))
        case .write(let handle, let value):
            guard value.count <= GATTDatabase.maximumValueLength else { return .finished(.failure(.valueTooLong(value.count))) }
            guard value.count > mtu - 3 else {
                return .send(.writeRequest(ATTWriteRequest(handle: handle, value: value)))
            }
            return enter(.prepareWrite(handle: handle, value: value, offset: 0, part: []), mtu: mtu)
        case .prepareWrite(let handle, let value, let offset, _):
            let part = Array(value[offset...].prefix(mtu - 5))
            phase = .prepareWrite(handle: handle, value: value, offset: offset, part: part)
            return .send(.prepareWriteRequest(ATTPrepareWriteRequest(handle: handle, offset: UInt16(offset), value: part)))
        case .executeWrite:
            return .send(.executeWriteRequest(ATTExecuteWriteRequest(flags: ATTExecuteWriteRequest.write)))
        case .cancelWrite:
            return .send(.executeWriteRequest(ATTExecuteWriteRequest(flags: ATTExecuteWriteRequest.cancel)))
        case .failed(let error):
            return .finished(.failure(error))
        }
    }

    /// A part of a long read arrived: another Read Blob while parts fill a whole response.
    private mutating func readPart(_ handle: UInt16, _ value: [UInt8], _ part: [UInt8], mtu: Int) -> Step {
        let whole = value + part
        guard part.count == mtu - 1, whole.count < GATTDatabase.maximumValueLength else {
            return .finished(.success(.value(Array(whole.prefix(GATTDatabase.maximumValueLength)))))
        }
        return enter(.read(handle: handle, value: whole, blob: true), mtu: mtu)
    }

    private func invalid(_ what: String) -> Step { .finished(.failure(.invalidResponse(what))) }

    private mutating func serviceFound(_ service: GATTDiscoveredService, mtu: Int) -> Step {
        switch goal {
        case .report, .subscribe:
            return .finished(.success(.services([service])))
        case .discover(var discovery):
            discovery.service = service
            goal = .discover(discovery)
            return enter(.findCharacteristics(next: service.startHandle, end: service.endHandle, found: []), mtu: mtu)
        case .read, .write:
            return enter(.findCharacteristics(next: service.startHandle, end: service.endHandle, found: []), mtu: mtu)
        }
    }

    private mutating func servicesDone(_ target: BluetoothUUID?, _ found: [GATTDiscoveredService], mtu: Int) -> Step {
        if case .discover(var discovery) = goal {
            // Read By Group Type (the peer does not support Find By Type Value) ran to the end.
            discovery.notFound()
            return nextService(discovery, mtu: mtu)
        }
        if let target { return .finished(.failure(.serviceNotFound(target))) }
        return .finished(.success(.services(found)))
    }

    private mutating func characteristicsDone(_ found: [GATTDiscoveredCharacteristic]) -> Step {
        switch goal {
        case .read(let uuid), .write(let uuid, _): return .finished(.failure(.characteristicNotFound(uuid)))
        case .report, .subscribe: return .finished(.success(.characteristics(found)))
        case .discover(var discovery):
            if let service = discovery.service {
                discovery.result.services.append(GATTDiscovery.Service(service: service, characteristics: found))
            }
            discovery.nextGroup()
            return nextService(discovery, mtu: discovery.result.mtu)
        }
    }

    /// A composite discovery goes on with the next service it looks for, or finishes.
    private mutating func nextService(_ discovery: Discovery, mtu: Int) -> Step {
        goal = .discover(discovery)
        guard let wanted = discovery.wanted else { return .finished(.success(.discovered(discovery.result))) }
        return enter(.findServiceByValue(wanted), mtu: mtu)
    }

    private mutating func descriptorsDone(_ found: [GATTDiscoveredDescriptor], mtu: Int) -> Step {
        guard case .subscribe(let configuration) = goal else { return .finished(.success(.descriptors(found))) }
        guard let cccd = found.first(where: { $0.uuid == GATTUUID.clientCharacteristicConfiguration }) else {
            return .finished(.failure(.descriptorNotFound(GATTUUID.clientCharacteristicConfiguration)))
        }
        var value = [UInt8]()
        value.appendLE16(configuration.rawValue)
        return enter(.write(handle: cccd.handle, value: value), mtu: mtu)
    }
}
