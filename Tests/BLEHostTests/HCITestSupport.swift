import Testing
@testable import BLEHost

/// Bytes from a hex test vector; a typo in the vector fails the test that uses it.
func hexBytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let bytes = Hex.decode(text) else {
        Issue.record("bad hex vector: \(text)", sourceLocation: sourceLocation)
        return []
    }
    return bytes
}

/// An event decoded from hex (without the H4 byte).
func decodeEvent(_ text: String) throws -> HCIEvent { try HCIEvent(decoding: hexBytes(text)) }
