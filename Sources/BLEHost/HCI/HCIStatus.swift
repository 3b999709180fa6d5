/// An HCI status / error code (Core Vol 1 Part F). Open: codes this host has no name for survive.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    /// Also what LE Connection Complete carries after LE Create Connection Cancel.
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    /// The controller's state does not allow the command now (e.g. enabling an enabled scan).
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let rejectedLimitedResources = HCIStatus(rawValue: 0x0D)
    public static let unsupportedFeature = HCIStatus(rawValue: 0x11)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let remoteUserTerminated = HCIStatus(rawValue: 0x13)
    public static let remoteLowResources = HCIStatus(rawValue: 0x14)
    public static let remotePowerOff = HCIStatus(rawValue: 0x15)
    public static let localHostTerminated = HCIStatus(rawValue: 0x16)
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    public static let unsupportedParameterValue = HCIStatus(rawValue: 0x20)
    public static let responseTimeout = HCIStatus(rawValue: 0x22)
    public static let instantPassed = HCIStatus(rawValue: 0x28)
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    public static let terminatedMICFailure = HCIStatus(rawValue: 0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)

    public var isSuccess: Bool { rawValue == 0 }

    private static let names: [UInt8: String] = [
        0x00: "success", 0x01: "unknown command", 0x02: "unknown connection identifier",
        0x03: "hardware failure", 0x05: "authentication failure", 0x06: "PIN or key missing",
        0x07: "memory capacity exceeded", 0x08: "connection timeout", 0x09: "connection limit exceeded",
        0x0B: "connection already exists", 0x0C: "command disallowed",
        0x0D: "rejected: limited resources", 0x11: "unsupported feature or parameter value",
        0x12: "invalid HCI command parameters", 0x13: "remote user terminated connection",
        0x14: "remote device terminated: low resources", 0x15: "remote device terminated: power off",
        0x16: "connection terminated by local host", 0x1A: "unsupported remote feature",
        0x1F: "unspecified error", 0x20: "unsupported LE parameter value", 0x22: "LL response timeout",
        0x28: "instant passed", 0x3A: "controller busy", 0x3B: "unacceptable connection parameters",
        0x3C: "advertising timeout", 0x3D: "connection terminated: MIC failure",
        0x3E: "connection failed to be established",
    ]

    public var description: String {
        let hex = "0x" + Hex.encode([rawValue])
        if let name = Self.names[rawValue] { return "\(name) (\(hex))" }
        return "status \(hex)"
    }
}
