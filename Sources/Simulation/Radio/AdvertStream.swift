import BLEHost

/// One advert as the node's radio hears it.
public struct ReceivedAdvert: Sendable, Equatable {
    /// Virtual seconds.
    public var time: Double
    /// Index of the device in ``GroundTruth/devices``.
    public var device: Int
    /// The device's address at that moment (it rotates).
    public var address: BluetoothAddress
    public var rotationEpoch: Int64
    /// dBm, −127…20.
    public var rssi: Int
}

/// Every advertising event of every present device, in time order, through the radio model: what
/// reaches the node's antenna. The air takes it from here (scan windows, reports to the host).
///
/// A device advertises every `advertInterval` plus the 0–10 ms random delay the controller adds to
/// each event, only while it is in range; its first event in a segment falls at a random point of
/// its first interval. Each device draws from its own random stream, so what one device does never
/// changes what another does. Memory stays one entry per device however long the run.
public struct AdvertStream: Sendable, IteratorProtocol, Sequence {
    public struct Counters: Sendable, Equatable {
        /// Advertising events sent by present devices.
        public var transmitted = 0
        /// Of those, lost or below sensitivity.
        public var lost = 0
    }

    private struct DeviceState: Sendable {
        var random: SimulationRandom
        var segment: Int
    }

    private let devices: [SimulatedDevice]
    public let radio: RadioModel
    private var states: [DeviceState]
    private var queue = TimedEventHeap<Int>()
    public private(set) var counters = Counters()

    /// Maximum random delay the controller adds to each advertising event (Core spec: 0–10 ms).
    public static let advertisingDelay = 0.010

    public init(devices: [SimulatedDevice], radio: RadioModel) {
        self.devices = devices
        self.radio = radio
        states = devices.map { DeviceState(random: SimulationRandom(seed: $0.seed, stream: 0xAD), segment: 0) }
        for device in devices where device.advert != nil && device.advertInterval > 0 {
            scheduleFirst(device.id, segment: 0)
        }
    }

    /// Time of the next advertising event (received or not); nil when every device has left.
    public var nextEventTime: Double? { queue.nextTime }

    public mutating func next() -> ReceivedAdvert? {
        next(notAfter: .infinity)
    }

    /// The next received advert at or before `time`; nil when there is none by then.
    public mutating func next(notAfter time: Double) -> ReceivedAdvert? {
        while let (at, id) = queue.pop(notAfter: time) {
            let device = devices[id]
            let segment = device.presence[states[id].segment]
            counters.transmitted += 1
            let distance = segment.path.distance(at: at)
            let rssi = radio.receive(measuredPower: device.measuredPower, distance: distance, using: &states[id].random)
            scheduleNext(id, after: at)
            guard let rssi else {
                counters.lost += 1
                continue
            }
            let epoch = device.rotation.epoch(at: at)
            return ReceivedAdvert(
                time: at, device: id, address: device.rotation.address(ofEpoch: epoch), rotationEpoch: epoch, rssi: rssi)
        }
        return nil
    }

    private mutating func scheduleFirst(_ id: Int, segment: Int) {
        let device = devices[id]
        guard segment < device.presence.count else { return }
        states[id].segment = segment
        let start = device.presence[segment].start + states[id].random.uniform(0, device.advertInterval)
        schedule(id, at: start)
    }

    private mutating func scheduleNext(_ id: Int, after time: Double) {
        let device = devices[id]
        let delay = states[id].random.uniform(0, Self.advertisingDelay)
        schedule(id, at: time + device.advertInterval + delay)
    }

    /// Schedules at `time` if the device is still in its segment then, else in its next segment.
    private mutating func schedule(_ id: Int, at time: Double) {
        let device = devices[id]
        let segment = states[id].segment
        if time < device.presence[segment].end {
            queue.schedule(id, at: time)
        } else {
            scheduleFirst(id, segment: segment + 1)
        }
    }
}
