import BLEHost

/// A Google/Apple Exposure Notification advert: service data for `0xFD6F` carrying a 16-byte
/// rolling proximity identifier (RPI) and 4 bytes of encrypted metadata (AEM). The node records
/// the RPI as the payload of kind `gaen`; no crypto is needed for that.
///
/// Held inline (no allocation): the advert classifier returns it per report.
public struct GAENAdvert: Hashable, Sendable {
    public static let serviceUUID: UInt16 = 0xFD6F
    public static let serviceDataSize = 20

    /// The RPI's 16 bytes in wire order, first 8 in `rpiHigh` (first byte most significant).
    public var rpiHigh: UInt64
    public var rpiLow: UInt64
    /// The AEM's 4 bytes in wire order, first byte most significant.
    public var metadata: UInt32

    /// From the service data after the 16-bit UUID; exactly 20 bytes.
    public init(serviceData data: ArraySlice<UInt8>) throws(DecodeError) {
        guard data.count == Self.serviceDataSize else {
            throw DecodeError(.lengthMismatch, field: "GAEN service data", detail: "\(data.count) bytes; it is 16 (RPI) + 4 (AEM)")
        }
        let s = data.startIndex
        var high: UInt64 = 0, low: UInt64 = 0, aem: UInt32 = 0
        for k in 0..<8 { high = high << 8 | UInt64(data[s + k]) }
        for k in 8..<16 { low = low << 8 | UInt64(data[s + k]) }
        for k in 16..<20 { aem = aem << 8 | UInt32(data[s + k]) }
        self.rpiHigh = high
        self.rpiLow = low
        self.metadata = aem
    }

    init(rpiHigh: UInt64, rpiLow: UInt64, metadata: UInt32) {
        self.rpiHigh = rpiHigh
        self.rpiLow = rpiLow
        self.metadata = metadata
    }

    public init(rpi: [UInt8], metadata: [UInt8]) throws(DecodeError) {
        try self.init(serviceData: (rpi + metadata)[...])
    }

    /// The rolling proximity identifier, the payload recorded for kind `gaen`.
    public var rpi: [UInt8] {
        var out = [UInt8]()
        out.appendBE64(rpiHigh)
        out.appendBE64(rpiLow)
        return out
    }

    /// The associated encrypted metadata.
    public var aem: [UInt8] {
        var out = [UInt8]()
        out.appendBE32(metadata)
        return out
    }

    /// The service data (after the UUID) as advertised: RPI then AEM.
    public var serviceData: [UInt8] { rpi + aem }
}
