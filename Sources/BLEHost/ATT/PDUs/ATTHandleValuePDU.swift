/// The PDUs whose parameters are an attribute handle and the rest a value: Write Request and
/// Write Command, Handle Value Notification and Indication. One codec for the four.
public protocol ATTHandleValuePDU: ATTProtocolDataUnit {
    var handle: UInt16 { get }
    var value: [UInt8] { get }
    init(handle: UInt16, value: [UInt8])
}

extension ATTHandleValuePDU {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        let handle = try r.readLE16("attribute handle")
        self.init(handle: handle, value: Array(r.readRest()))
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(handle)
        bytes.append(contentsOf: value)
    }
}
