/// An LE Meta event (0x3E): one subevent code, then that subevent's parameters.
public enum LEMetaEvent: Hashable, Sendable {
    case connectionComplete(LEConnectionComplete)
    case advertisingReport(LEAdvertisingReports)
    case connectionUpdateComplete(LEConnectionUpdateComplete)
    case readRemoteFeaturesComplete(LEReadRemoteFeaturesComplete)
    case longTermKeyRequest(LELongTermKeyRequest)
    /// Enhanced Connection Complete is decoded into the same value as Connection Complete,
    /// with the resolvable private addresses filled in.
    case enhancedConnectionComplete(LEConnectionComplete)
    case unknown(subevent: UInt8, parameters: ArraySlice<UInt8>)

    public enum Subevent {
        public static let connectionComplete: UInt8 = 0x01
        public static let advertisingReport: UInt8 = 0x02
        public static let connectionUpdateComplete: UInt8 = 0x03
        public static let readRemoteFeaturesComplete: UInt8 = 0x04
        public static let longTermKeyRequest: UInt8 = 0x05
        public static let enhancedConnectionComplete: UInt8 = 0x0A
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        guard let subevent = parameters.first else {
            throw DecodeError(.truncated, field: "Subevent_Code", detail: "needs 1 bytes, 0 left")
        }
        let rest = parameters[(parameters.startIndex + 1)...]
        switch subevent {
        case Subevent.connectionComplete: self = .connectionComplete(try LEConnectionComplete(parameters: rest, enhanced: false))
        case Subevent.advertisingReport: self = .advertisingReport(try LEAdvertisingReports(parameters: rest))
        case Subevent.connectionUpdateComplete: self = .connectionUpdateComplete(try LEConnectionUpdateComplete(parameters: rest))
        case Subevent.readRemoteFeaturesComplete: self = .readRemoteFeaturesComplete(try LEReadRemoteFeaturesComplete(parameters: rest))
        case Subevent.longTermKeyRequest: self = .longTermKeyRequest(try LELongTermKeyRequest(parameters: rest))
        case Subevent.enhancedConnectionComplete:
            self = .enhancedConnectionComplete(try LEConnectionComplete(parameters: rest, enhanced: true))
        default: self = .unknown(subevent: subevent, parameters: rest)
        }
    }
}

extension LEMetaEvent {
    /// An LE Meta event packet: `0x3E | length | subevent | parameters`.
    public static func packet(subevent: UInt8, parameters: [UInt8]) -> H4Packet {
        var p: [UInt8] = [subevent]
        p.reserveCapacity(1 + parameters.count)
        p.append(contentsOf: parameters)
        return HCIEventCode.leMeta.packet(parameters: p)
    }
}
