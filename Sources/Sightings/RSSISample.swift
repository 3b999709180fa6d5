/// One radio measurement of a device: when, and how strong. Herald's sensor node reports the
/// measurements it took before it knew a device's payload (``SensorEvent/read`` `earlier`), and
/// the diary's presence tracker attributes them to that payload once it is known.
public struct RSSISample: Hashable, Sendable {
    /// Wall-clock Unix seconds.
    public var time: Double
    /// Received signal strength, dBm; nil when the controller could not measure it.
    public var rssi: Int?

    public init(time: Double, rssi: Int?) {
        self.time = time
        self.rssi = rssi
    }
}
