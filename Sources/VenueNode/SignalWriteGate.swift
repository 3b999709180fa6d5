import BLEHost
import Herald
import Synchronization

/// Checks writes to our signal characteristic before the GATT server accepts them: a write that
/// does not decode as a ``SignalWrite`` (too short, a length field that disagrees with the data,
/// oversized) is answered with ATT error 0x0D, Invalid Attribute Value Length, as Herald's iOS
/// peripheral does. Writes to other characteristics are left to the database's permissions.
///
/// It runs on the host's thread for every write, so it only decodes and counts; accepted writes
/// reach the node as events and are decoded again there.
public final class SignalWriteGate: Sendable {
    private let rejectedCount = Atomic<Int>(0)

    public init() {}

    /// The validator to give the host.
    public func validate(_ write: GATTWrite) -> ATTErrorCode? {
        guard write.characteristic.uuid == HeraldUUIDs.androidSignalCharacteristic else { return nil }
        do {
            _ = try SignalWrite(decoding: write.value)
            return nil
        } catch {
            rejectedCount.add(1, ordering: .relaxed)
            return SignalWriteError.attError
        }
    }

    /// Writes answered with an ATT error so far.
    public var rejected: Int { rejectedCount.load(ordering: .relaxed) }
}
