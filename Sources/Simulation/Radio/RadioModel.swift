import Foundation

/// How an advert travels from a device to the node: log-distance path loss with shadowing noise,
/// per-packet loss, and the receiver's sensitivity.
///
///     RSSI = P(1 m) − 10 · n · log10(d / 1 m) + X,   X ~ Normal(0, σ)
///
/// with `P(1 m)` the device's measured power (which already holds its transmit power and how it
/// is carried), `n` the path-loss exponent (2 in free space, 1.6–3.5 indoors) and `X` drawn per
/// packet. A packet is lost with probability ``advertLoss`` (collisions, the scanner on another
/// channel, interference) and never heard below ``sensitivity``.
public struct RadioModel: Sendable, Equatable {
    public var pathLossExponent: Double
    /// Standard deviation of the per-packet shadowing noise, dB.
    public var shadowingSD: Double
    /// Probability that an advert is not received at all.
    public var advertLoss: Double
    /// Weakest signal the node's controller receives, dBm.
    public var sensitivity: Double

    public init(pathLossExponent: Double = 2.0, shadowingSD: Double = 4, advertLoss: Double = 0.1, sensitivity: Double = -100) {
        self.pathLossExponent = pathLossExponent
        self.shadowingSD = shadowingSD
        self.advertLoss = advertLoss
        self.sensitivity = sensitivity
    }

    /// The mean RSSI at `distance` metres (distances under 10 cm count as 10 cm).
    public func meanRSSI(measuredPower: Double, distance: Double) -> Double {
        measuredPower - 10 * pathLossExponent * log10(max(distance, 0.1))
    }

    /// One packet: its RSSI (dBm, as HCI reports it: an integer in −127…20), or nil when it is
    /// lost or too weak. Draws the same count of numbers either way, so a device's later packets
    /// do not depend on whether this one arrived.
    public func receive(measuredPower: Double, distance: Double, using random: inout SimulationRandom) -> Int? {
        let lost = random.chance(advertLoss)
        let rssi = meanRSSI(measuredPower: measuredPower, distance: distance) + random.normal(sd: shadowingSD)
        guard !lost, rssi >= sensitivity else { return nil }
        return Int(min(max(rssi.rounded(), -127), 20))
    }
}
