/// Handle Value Notification (0x1B): the server pushes a value; not confirmed.
public struct ATTHandleValueNotification: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.handleValueNotification
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// Handle Value Indication (0x1D): the server pushes a value and waits for a Confirmation before
/// sending the next indication.
public struct ATTHandleValueIndication: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.handleValueIndication
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// Handle Value Confirmation (0x1E): no parameters.
public struct ATTHandleValueConfirmation: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.handleValueConfirmation

    public init() {}

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        try ByteReader(parameters).expectEnd("handle value confirmation")
    }

    public func appendParameters(to bytes: inout [UInt8]) {}
}
