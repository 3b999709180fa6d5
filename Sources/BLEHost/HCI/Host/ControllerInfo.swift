/// What the init sequence learned about the controller.
public struct ControllerInfo: Hashable, Sendable {
    /// Public address from Read BD_ADDR (zero if the controller has none).
    public var address: BluetoothAddress
    /// HCI version (6 = 4.0, 7 = 4.1, 8 = 4.2, 9 = 5.0, …) and revision.
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    public var lmpSubversion: UInt16
    /// Company identifier of the manufacturer.
    public var manufacturer: UInt16
    /// Largest ACL data payload per packet, and how many packets the controller buffers
    /// (shared by all links): the limits for fragmentation and ACL flow control.
    public var aclDataLength: Int
    public var aclPacketCount: Int
    /// True if the ACL numbers came from Read Buffer Size because LE Read Buffer Size said 0/0
    /// (or is unknown): LE shares the BR/EDR buffers.
    public var aclBuffersShared: Bool
    /// LE Read Supported States bitmap (0 if the controller could not say).
    public var supportedStates: UInt64
    public var leFeatures: LEFeatures
    public var supportedCommands: SupportedCommands

    public init(
        address: BluetoothAddress, hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, lmpSubversion: UInt16,
        manufacturer: UInt16, aclDataLength: Int, aclPacketCount: Int, aclBuffersShared: Bool, supportedStates: UInt64,
        leFeatures: LEFeatures, supportedCommands: SupportedCommands
    ) {
        self.address = address
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.lmpSubversion = lmpSubversion
        self.manufacturer = manufacturer
        self.aclDataLength = aclDataLength
        self.aclPacketCount = aclPacketCount
        self.aclBuffersShared = aclBuffersShared
        self.supportedStates = supportedStates
        self.leFeatures = leFeatures
        self.supportedCommands = supportedCommands
    }

    /// "4.0", "5.0", … for HCI versions this host knows.
    public var bluetoothVersion: String {
        let names: [UInt8: String] = [
            6: "4.0", 7: "4.1", 8: "4.2", 9: "5.0", 10: "5.1", 11: "5.2", 12: "5.3", 13: "5.4", 14: "6.0",
        ]
        return names[hciVersion] ?? "HCI version \(hciVersion)"
    }
}
