/// The GATT server for one link: turns each request PDU into exactly one response PDU, following
/// Core Vol 3 Parts F and G. Pure: the shared ``GATTDatabase`` and the link's MTU are passed in;
/// this value holds only the link's own state (CCCD values, prepared writes).
public struct GATTServer: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Our receive MTU, offered in Exchange MTU Response (23...517).
        public var rxMTU: Int
        /// Prepare Write Requests queued before "Prepare Queue Full".
        public var prepareQueueLimit: Int
        /// Bytes of prepared values queued before "Prepare Queue Full".
        public var prepareQueueByteLimit: Int

        public init(rxMTU: Int = ATTBearer.maximumMTU, prepareQueueLimit: Int = 32, prepareQueueByteLimit: Int = 1024) {
            self.rxMTU = min(max(rxMTU, ATTBearer.defaultMTU), ATTBearer.maximumMTU)
            self.prepareQueueLimit = prepareQueueLimit
            self.prepareQueueByteLimit = prepareQueueByteLimit
        }
    }

    /// What handling one PDU produced.
    public struct Reply: Hashable, Sendable {
        /// The response PDU; nil for commands (never answered) and for PDUs that are not requests.
        public var response: ATTPDU?
        public var events: [GATTServerEvent]
    }

    public let link: UInt16
    public let configuration: Configuration
    /// CCCD values of this link, by characteristic value handle.
    public private(set) var clientConfigurations: [UInt16: GATTClientConfiguration] = [:]
    private var prepareQueue: [ATTPrepareWriteRequest] = []
    private var preparedBytes = 0

    public init(link: UInt16, configuration: Configuration = Configuration()) {
        self.link = link
        self.configuration = configuration
    }

    /// Handles one request or command from the peer. `mtu` is the link's current ATT_MTU.
    /// Anything that is not a request or command gets no response.
    public mutating func handle(
        _ pdu: ATTPDU, database: GATTDatabase, mtu: Int, validateWrite: GATTWriteValidator = { _ in nil }
    ) -> Reply {
        var events: [GATTServerEvent] = []
        let response: ATTPDU?
        switch pdu {
        case .exchangeMTURequest:
            response = .exchangeMTUResponse(ATTExchangeMTUResponse(serverRxMTU: UInt16(configuration.rxMTU)))
        case .findInformationRequest(let request):
            response = findInformation(request, database, mtu)
        case .findByTypeValueRequest(let request):
            response = findByTypeValue(request, database, mtu)
        case .readByTypeRequest(let request):
            response = readByType(request, database, mtu)
        case .readRequest(let request):
            response = read(request, database, mtu)
        case .readBlobRequest(let request):
            response = readBlob(request, database, mtu)
        case .readMultipleRequest(let request):
            response = readMultiple(request, database, mtu)
        case .readByGroupTypeRequest(let request):
            response = readByGroupType(request, database, mtu)
        case .writeRequest(let request):
            switch check(request.handle, request.value, database, withResponse: true, validateWrite) {
            case .success(let effect):
                apply(effect, &events)
                response = .writeResponse(ATTWriteResponse())
            case .failure(let refusal):
                refusal.report(into: &events)
                response = Self.error(.writeRequest, request.handle, refusal.code)
            }
        case .writeCommand(let command):
            switch check(command.handle, command.value, database, withResponse: false, validateWrite) {
            case .success(let effect): apply(effect, &events)
            case .failure(let refusal): refusal.report(into: &events)
            }
            response = nil
        case .prepareWriteRequest(let request):
            response = prepareWrite(request, database)
        case .executeWriteRequest(let request):
            response = executeWrite(request, database, validateWrite, &events)
        case .unsupported(let opcode, _):
            response = opcode.isCommand ? nil : Self.error(opcode, 0, .requestNotSupported)
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
            .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse, .readByGroupTypeResponse,
            .writeResponse, .prepareWriteResponse, .executeWriteResponse, .handleValueNotification,
            .handleValueIndication, .handleValueConfirmation:
            response = nil
        }
        return Reply(response: response, events: events)
    }

    /// The notification or indication to send for a new value of `characteristic`, if this link
    /// subscribed to it: a notification when notifications are enabled, otherwise an indication.
    /// The value is cut to ATT_MTU − 3.
    public func valueUpdate(for characteristic: GATTCharacteristic, value: [UInt8], mtu: Int) -> ATTPDU? {
        let configuration = clientConfigurations[characteristic.valueHandle] ?? []
        let value = Array(value.prefix(mtu - 3))
        if configuration.contains(.notify) {
            return .handleValueNotification(ATTHandleValueNotification(handle: characteristic.valueHandle, value: value))
        }
        if configuration.contains(.indicate) {
            return .handleValueIndication(ATTHandleValueIndication(handle: characteristic.valueHandle, value: value))
        }
        return nil
    }

    static func error(_ opcode: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> ATTPDU {
        .errorResponse(ATTErrorResponse(requestOpcode: opcode, handle: handle, error: code))
    }

    /// The value this link sees: CCCDs are per link, everything else is in the database.
    private func value(of attribute: GATTAttribute) -> [UInt8] {
        guard case .clientConfiguration(let valueHandle) = attribute.role else { return attribute.value }
        var bytes = [UInt8]()
        bytes.appendLE16((clientConfigurations[valueHandle] ?? []).rawValue)
        return bytes
    }

    private func validRange(_ start: UInt16, _ end: UInt16) -> Bool { start != 0 && start <= end }

    // MARK: Discovery

    private func findInformation(_ request: ATTFindInformationRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        let op = ATTFindInformationRequest.opcode
        guard validRange(request.startHandle, request.endHandle) else {
            return Self.error(op, request.startHandle, .invalidHandle)
        }
        var format: ATTFindInformationResponse.Format? = nil
        var entries: [ATTFindInformationResponse.Entry] = []
        var size = 2
        for attribute in database.attributes(from: request.startHandle, through: request.endHandle) {
            let entryFormat: ATTFindInformationResponse.Format = attribute.type.shortValue == nil ? .uuid128 : .uuid16
            if let format, format != entryFormat { break }
            let entrySize = 2 + entryFormat.uuidSize
            if size + entrySize > mtu { break }
            format = entryFormat
            size += entrySize
            entries.append(.init(handle: attribute.handle, type: attribute.type))
        }
        guard let format else { return Self.error(op, request.startHandle, .attributeNotFound) }
        return .findInformationResponse(ATTFindInformationResponse(format: format, entries: entries))
    }

    private func findByTypeValue(_ request: ATTFindByTypeValueRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        let op = ATTFindByTypeValueRequest.opcode
        guard validRange(request.startHandle, request.endHandle) else {
            return Self.error(op, request.startHandle, .invalidHandle)
        }
        let type = BluetoothUUID(request.attributeType)
        var entries: [ATTFindByTypeValueResponse.Entry] = []
        for attribute in database.attributes(from: request.startHandle, through: request.endHandle)
        where attribute.type == type && attribute.permissions.contains(.read) && value(of: attribute) == request.value {
            if 1 + 4 * (entries.count + 1) > mtu { break }
            var groupEnd = attribute.handle
            if case .primaryService(let end) = attribute.role { groupEnd = end }
            entries.append(.init(foundHandle: attribute.handle, groupEndHandle: groupEnd))
        }
        guard !entries.isEmpty else { return Self.error(op, request.startHandle, .attributeNotFound) }
        return .findByTypeValueResponse(ATTFindByTypeValueResponse(entries: entries))
    }

    private func readByType(_ request: ATTReadByTypeRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        let op = ATTReadByTypeRequest.opcode
        guard validRange(request.startHandle, request.endHandle) else {
            return Self.error(op, request.startHandle, .invalidHandle)
        }
        var entries: [ATTReadByTypeResponse.Entry] = []
        var size = 2
        for attribute in database.attributes(from: request.startHandle, through: request.endHandle)
        where attribute.type == request.attributeType {
            guard attribute.permissions.contains(.read) else {
                if entries.isEmpty { return Self.error(op, attribute.handle, .readNotPermitted) }
                break
            }
            // One length per response: stop at the first entry of another length.
            let value = Array(value(of: attribute).prefix(min(mtu - 4, 253)))
            if let first = entries.first, first.value.count != value.count { break }
            if size + 2 + value.count > mtu { break }
            size += 2 + value.count
            entries.append(.init(handle: attribute.handle, value: value))
        }
        guard !entries.isEmpty else { return Self.error(op, request.startHandle, .attributeNotFound) }
        return .readByTypeResponse(ATTReadByTypeResponse(entries: entries))
    }

    private func readByGroupType(_ request: ATTReadByGroupTypeRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        let op = ATTReadByGroupTypeRequest.opcode
        guard validRange(request.startHandle, request.endHandle) else {
            return Self.error(op, request.startHandle, .invalidHandle)
        }
        guard request.groupType == GATTUUID.primaryService || request.groupType == GATTUUID.secondaryService else {
            return Self.error(op, request.startHandle, .unsupportedGroupType)
        }
        var entries: [ATTReadByGroupTypeResponse.Entry] = []
        var size = 2
        for attribute in database.attributes(from: request.startHandle, through: request.endHandle)
        where attribute.type == request.groupType {
            guard case .primaryService(let end) = attribute.role else { continue }
            let value = Array(attribute.value.prefix(min(mtu - 6, 251)))
            if let first = entries.first, first.value.count != value.count { break }
            if size + 4 + value.count > mtu { break }
            size += 4 + value.count
            entries.append(.init(handle: attribute.handle, groupEndHandle: end, value: value))
        }
        guard !entries.isEmpty else { return Self.error(op, request.startHandle, .attributeNotFound) }
        return .readByGroupTypeResponse(ATTReadByGroupTypeResponse(entries: entries))
    }

    // MARK: Reads

    private func readable(_ handle: UInt16, _ database: GATTDatabase) -> Result<GATTAttribute, ATTErrorCode> {
        guard let attribute = database.attribute(handle) else { return .failure(.invalidHandle) }
        guard attribute.permissions.contains(.read) else { return .failure(.readNotPermitted) }
        return .success(attribute)
    }

    private func read(_ request: ATTReadRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        switch readable(request.handle, database) {
        case .failure(let error): return Self.error(ATTReadRequest.opcode, request.handle, error)
        case .success(let attribute): return .readResponse(ATTReadResponse(value: Array(value(of: attribute).prefix(mtu - 1))))
        }
    }

    private func readBlob(_ request: ATTReadBlobRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        let op = ATTReadBlobRequest.opcode
        switch readable(request.handle, database) {
        case .failure(let error):
            return Self.error(op, request.handle, error)
        case .success(let attribute):
            let value = value(of: attribute)
            let offset = Int(request.offset)
            guard offset <= value.count else { return Self.error(op, request.handle, .invalidOffset) }
            if attribute.hasFixedLength && value.count <= mtu - 1 {
                return Self.error(op, request.handle, .attributeNotLong)
            }
            return .readBlobResponse(ATTReadBlobResponse(value: Array(value[offset...].prefix(mtu - 1))))
        }
    }

    private func readMultiple(_ request: ATTReadMultipleRequest, _ database: GATTDatabase, _ mtu: Int) -> ATTPDU {
        var values = [UInt8]()
        for handle in request.handles {
            switch readable(handle, database) {
            case .failure(let error): return Self.error(ATTReadMultipleRequest.opcode, handle, error)
            case .success(let attribute): values.append(contentsOf: value(of: attribute))
            }
        }
        return .readMultipleResponse(ATTReadMultipleResponse(values: Array(values.prefix(mtu - 1))))
    }

    // MARK: Writes

    /// What an accepted write changes.
    private enum WriteEffect {
        case write(GATTWrite)
        case subscribe(GATTCharacteristic, GATTClientConfiguration)
    }

    /// Why a write was not applied: the ATT error, and the write itself when the validator
    /// refused it (the application hears of those; the database's own refusals are the peer's
    /// business alone).
    private struct Refusal: Error {
        var code: ATTErrorCode
        var write: GATTWrite?

        init(_ code: ATTErrorCode, write: GATTWrite? = nil) {
            self.code = code
            self.write = write
        }

        func report(into events: inout [GATTServerEvent]) {
            if let write { events.append(.writeRefused(write, code)) }
        }
    }

    /// Checks a write of a whole value without applying it, so a long write can be checked in
    /// full before any part of it takes effect.
    private func check(
        _ handle: UInt16, _ value: [UInt8], _ database: GATTDatabase, withResponse: Bool,
        _ validateWrite: GATTWriteValidator
    ) -> Result<WriteEffect, Refusal> {
        guard let attribute = database.attribute(handle) else { return .failure(Refusal(.invalidHandle)) }
        guard attribute.permissions.contains(.write) else { return .failure(Refusal(.writeNotPermitted)) }
        switch attribute.role {
        case .clientConfiguration(let valueHandle):
            guard value.count == 2 else { return .failure(Refusal(.invalidAttributeValueLength)) }
            guard let characteristic = database.characteristic(valueHandle: valueHandle) else {
                return .failure(Refusal(.unlikelyError))
            }
            let requested = GATTClientConfiguration(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
            let configuration = requested.intersection([.notify, .indicate])
            if configuration.contains(.notify) && !characteristic.properties.contains(.notify)
                || configuration.contains(.indicate) && !characteristic.properties.contains(.indicate)
            {
                return .failure(Refusal(.cccdImproperlyConfigured))
            }
            return .success(.subscribe(characteristic, configuration))
        case .characteristicValue:
            guard value.count <= GATTDatabase.maximumValueLength else { return .failure(Refusal(.invalidAttributeValueLength)) }
            guard let characteristic = database.characteristic(valueHandle: handle) else { return .failure(Refusal(.unlikelyError)) }
            var write = GATTWrite(link: link, characteristic: characteristic, value: value, withResponse: withResponse)
            if let error = validateWrite(&write) { return .failure(Refusal(error, write: write)) }
            return .success(.write(write))
        case .primaryService, .characteristicDeclaration, .descriptor:
            return .failure(Refusal(.writeNotPermitted))
        }
    }

    private mutating func apply(_ effect: WriteEffect, _ events: inout [GATTServerEvent]) {
        switch effect {
        case .write(let write):
            events.append(.write(write))
        case .subscribe(let characteristic, let configuration):
            let previous = clientConfigurations[characteristic.valueHandle] ?? []
            clientConfigurations[characteristic.valueHandle] = configuration.isEmpty ? nil : configuration
            if previous != configuration {
                events.append(
                    .subscriptionChanged(
                        GATTSubscription(link: link, characteristic: characteristic, configuration: configuration)))
            }
        }
    }

    private mutating func prepareWrite(_ request: ATTPrepareWriteRequest, _ database: GATTDatabase) -> ATTPDU {
        let op = ATTPrepareWriteRequest.opcode
        guard let attribute = database.attribute(request.handle) else {
            return Self.error(op, request.handle, .invalidHandle)
        }
        guard attribute.permissions.contains(.write) else { return Self.error(op, request.handle, .writeNotPermitted) }
        guard prepareQueue.count < configuration.prepareQueueLimit,
            preparedBytes + request.value.count <= configuration.prepareQueueByteLimit
        else { return Self.error(op, request.handle, .prepareQueueFull) }
        prepareQueue.append(request)
        preparedBytes += request.value.count
        return .prepareWriteResponse(ATTPrepareWriteResponse(handle: request.handle, offset: request.offset, value: request.value))
    }

    /// Assembles each handle's prepared parts into one value (a part may start anywhere up to
    /// the end of what came before it), checks every value, and only then applies them all.
    private mutating func executeWrite(
        _ request: ATTExecuteWriteRequest, _ database: GATTDatabase, _ validateWrite: GATTWriteValidator,
        _ events: inout [GATTServerEvent]
    ) -> ATTPDU {
        let op = ATTExecuteWriteRequest.opcode
        let queue = prepareQueue
        prepareQueue = []
        preparedBytes = 0
        switch request.flags {
        case ATTExecuteWriteRequest.cancel:
            return .executeWriteResponse(ATTExecuteWriteResponse())
        case ATTExecuteWriteRequest.write:
            break
        default:
            return Self.error(op, 0, .invalidPDU)
        }
        var order: [UInt16] = []
        var values: [UInt16: [UInt8]] = [:]
        for part in queue {
            var value = values[part.handle] ?? []
            if values[part.handle] == nil { order.append(part.handle) }
            guard Int(part.offset) <= value.count else { return Self.error(op, part.handle, .invalidOffset) }
            value = Array(value.prefix(Int(part.offset))) + part.value
            values[part.handle] = value
        }
        var effects: [WriteEffect] = []
        for handle in order {
            switch check(handle, values[handle] ?? [], database, withResponse: true, validateWrite) {
            case .success(let effect): effects.append(effect)
            case .failure(let refusal):
                refusal.report(into: &events)
                return Self.error(op, handle, refusal.code)
            }
        }
        for effect in effects { apply(effect, &events) }
        return .executeWriteResponse(ATTExecuteWriteResponse())
    }
}
