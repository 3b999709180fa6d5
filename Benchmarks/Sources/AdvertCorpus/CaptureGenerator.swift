import BLEHost

/// Builds a btsnoop capture (datalink 1002, H4) of LE Advertising Report events as a venue's
/// controller would deliver them with duplicate filtering off, deterministically from a seed.
///
/// - **realistic**: `devices` advertisers (the mix of ``CorpusKind``) repeating their adverts;
///   addresses (and GAEN RPIs) rotate about every 15 minutes, a few Android phones every 10 s.
/// - **distinct**: the same devices and report order, but every report's AD bytes are made
///   unique (see ``CorpusDevice/advertisingData(at:scanResponse:unique:)``), so a parser that
///   caches repeats never hits its cache.
///
/// Events carry one report, sometimes two or three (as controllers batch them under load).
public struct CaptureGenerator: Sendable {
    public enum Stream: String, Sendable, CaseIterable {
        case realistic
        case distinct
    }

    public var stream: Stream
    public var devices: [CorpusDevice]
    public var reports: Int
    /// Venue time the capture spans, seconds.
    public var seconds: Double
    public var seed: UInt64
    /// Wall time of the first record (Unix seconds).
    public static let startTime: Double = 1_795_460_400  // 2026-11-22 19:00 UTC

    public init(stream: Stream, devices count: Int = 500, reports: Int = 1_000_000, seconds: Double = 600, seed: UInt64 = 1) {
        self.stream = stream
        self.reports = reports
        self.seconds = seconds
        self.seed = seed
        self.devices = Self.venue(devices: count, seed: seed)
    }

    /// The venue's devices: kinds by share, RSSI and rotation schedules drawn from the seed.
    public static func venue(devices count: Int, seed: UInt64) -> [CorpusDevice] {
        var rng = SplitMix64(seed: seed ^ 0xDE71CE5)
        let total = CorpusKind.allCases.reduce(0) { $0 + $1.share }
        var out: [CorpusDevice] = []
        for index in 0..<count {
            // Kinds interleaved in proportion to their share.
            var slot = (index * total / max(count, 1) + rng.below(total)) % total
            var kind = CorpusKind.heraldAndroid
            for k in CorpusKind.allCases {
                if slot < k.share { kind = k; break }
                slot -= k.share
            }
            let fastRotation = kind == .heraldAndroid && index % 20 == 0
            out.append(CorpusDevice(
                index: index, kind: kind, rotationPeriod: fastRotation ? 10 : 780 + Double(rng.below(240)),
                rotationPhase: Double(rng.below(1000)), baseRSSI: -50 - rng.below(40), variant: rng.below(30)))
        }
        return out
    }

    /// The whole capture file.
    public func capture() -> [UInt8] {
        var writer = CaptureWriter(reservingCapacity: reports * 72)
        forEachEvent { time, body in writer.append(event: body, unixSeconds: Self.startTime + time) }
        return writer.bytes
    }

    /// Each event's body (event code onwards) with its venue time, in order.
    public func forEachEvent(_ body: (Double, [UInt8]) -> Void) {
        var rng = SplitMix64(seed: seed)
        // Pick devices by advertising rate.
        var cumulative: [Int] = []
        var sum = 0
        for device in devices {
            sum += device.kind.rate
            cumulative.append(sum)
        }
        var produced = 0
        while produced < reports {
            let roll = rng.below(100)
            let inEvent = min(roll < 80 ? 1 : roll < 95 ? 2 : 3, reports - produced)
            let time = seconds * Double(produced) / Double(reports)
            var event: [UInt8] = [0x3E, 0, 0x02, UInt8(inEvent)]
            for _ in 0..<inEvent {
                let pick = rng.below(sum)
                var low = 0, high = cumulative.count - 1
                while low < high {
                    let mid = (low + high) / 2
                    if cumulative[mid] > pick { high = mid } else { low = mid + 1 }
                }
                let device = devices[low]
                let scanResponse = (device.kind == .noise || device.kind == .appleOther) && device.variant % 5 != 0 && rng.below(4) == 0
                let unique = stream == .distinct ? UInt32(produced) : nil
                let data = device.advertisingData(at: time, scanResponse: scanResponse, unique: unique)
                precondition(data.count <= 31, "corpus advert of \(device.kind) is \(data.count) bytes")
                let eventType: UInt8
                if scanResponse {
                    eventType = 0x04
                } else if !device.kind.isConnectable || (device.kind == .noise && device.variant % 5 == 0)
                    || (device.kind == .appleAccessory && device.variant % 3 == 0)
                {
                    eventType = 0x03
                } else {
                    eventType = 0x00
                }
                event.append(eventType)
                event.append(device.addressType.rawValue)
                device.address(at: time).append(to: &event)
                event.append(UInt8(data.count))
                event.append(contentsOf: data)
                let rssi = max(-100, min(-30, device.baseRSSI + rng.below(13) - 6))
                event.append(UInt8(bitPattern: Int8(rssi)))
                produced += 1
            }
            event[1] = UInt8(event.count - 2)
            body(time, event)
        }
    }
}
