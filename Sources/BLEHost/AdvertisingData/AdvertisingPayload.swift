/// Advertising data or scan response data checked to fit a legacy advertising PDU (≤ 31 bytes).
/// The bytes are AD structures; this type does not check them (``AdvertisingData`` reads them).
public struct AdvertisingPayload: Hashable, Sendable, CustomStringConvertible {
    /// The legacy advertising data limit.
    public static let maximumLength = 31

    public let bytes: [UInt8]

    public static let empty = AdvertisingPayload(unchecked: [])

    /// Throws ``AdvertisingPayloadTooLong`` for more than 31 bytes.
    public init(_ bytes: [UInt8]) throws(AdvertisingPayloadTooLong) {
        guard bytes.count <= Self.maximumLength else { throw AdvertisingPayloadTooLong(length: bytes.count) }
        self.bytes = bytes
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Length byte then the data padded with zeros to 31 bytes: the 32 parameter bytes of
    /// LE Set Advertising Data and LE Set Scan Response Data.
    func appendPadded(to out: inout [UInt8]) {
        out.append(UInt8(bytes.count))
        out.append(contentsOf: bytes)
        out.append(contentsOf: repeatElement(0, count: Self.maximumLength - bytes.count))
    }

    public var description: String { Hex.encode(bytes) }
}

/// Advertising or scan response data longer than a legacy PDU holds.
public struct AdvertisingPayloadTooLong: Error, Hashable, Sendable, CustomStringConvertible {
    public var length: Int
    public var description: String {
        "advertising data is \(length) bytes; a legacy advertising PDU holds at most \(AdvertisingPayload.maximumLength)"
    }
}
