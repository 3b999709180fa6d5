import BLEHost
import Herald
import Synchronization

/// Checks writes to our signal characteristic before the GATT server accepts them: a write that
/// does not decode as a ``SignalWrite`` (too short, a length field that disagrees with the data,
/// oversized) is answered with ATT error 0x0D, Invalid Attribute Value Length, as Herald's iOS
/// peripheral does. Writes to other characteristics are left to the database's permissions.
///
/// With a ``RateLimit`` each link may have at most `burst` signal writes accepted at once and
/// `perSecond` after that (a token bucket per link); a write beyond it is answered with 0x11,
/// Insufficient Resources (a Write Command is dropped), changes nothing and, not being accepted,
/// does not keep the link from its idle limit. Herald phones write a few times a minute; the
/// limit bounds what one link can make the node do to `perSecond`.
///
/// The host's GATT server calls it for every write, on the host's thread, so it only decodes and
/// decides. An accepted write reaches the node as `HostEvent.gattWrite` carrying the decoded
/// ``SignalWrite`` (``GATTWrite/decoded``), decoded once; a refused one as
/// `HostEvent.gattWriteRefused` with its error, which the node driver counts (the node's
/// rejected writes, the loop's notice of writes that came too fast). Both go straight to the
/// node's loop on the same thread (``NodeCore``): no queue to flood.
public final class SignalWriteGate: Sendable {
    public struct RateLimit: Hashable, Sendable {
        public var perSecond: Double
        public var burst: Int

        public init(perSecond: Double, burst: Int) {
            self.perSecond = max(perSecond, 0.001)
            self.burst = max(burst, 1)
        }

        /// `venue-beacon run`'s limit: 4 signal writes a second per link, 8 at once.
        public static let node = RateLimit(perSecond: 4, burst: 8)
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    private let limit: RateLimit?
    private let buckets = Mutex<[UInt16: Bucket]>([:])

    /// Without a rate limit by default.
    public init(rateLimit: RateLimit? = nil) {
        self.limit = rateLimit
    }

    /// The validator to give the host, which tells it the time of each write (its engine's:
    /// the simulated venue's phones write on virtual time, and are rate-limited on it too).
    public func validate(_ write: inout GATTWrite, now: ContinuousClock.Instant) -> ATTErrorCode? {
        guard write.characteristic.uuid == HeraldUUIDs.androidSignalCharacteristic else { return nil }
        do {
            write.decoded = try SignalWrite(decoding: write.value)
        } catch {
            return SignalWriteError.attError
        }
        guard let limit, !take(limit, link: write.link, now: now) else { return nil }
        return .insufficientResources
    }

    /// Takes a token from the link's bucket; false when it is empty.
    private func take(_ limit: RateLimit, link: UInt16, now: ContinuousClock.Instant) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[link] ?? Bucket(tokens: Double(limit.burst), at: now)
            let elapsed = Double((now - bucket.at).components.seconds) + Double((now - bucket.at).components.attoseconds) * 1e-18
            bucket.tokens = min(Double(limit.burst), bucket.tokens + max(0, elapsed) * limit.perSecond)
            bucket.at = now
            let taken = bucket.tokens >= 1
            if taken { bucket.tokens -= 1 }
            buckets[link] = bucket
            // Links come and go (handles are reused): forget buckets that have refilled.
            if buckets.count > 64 {
                let full = Double(limit.burst) / limit.perSecond
                buckets = buckets.filter { now - $0.value.at < .milliseconds(Int64(full * 1000)) }
            }
            return taken
        }
    }
}
