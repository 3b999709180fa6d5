// air-bench: how fast the simulated air produces what the node's controller reports, so that a
// simulated venue can run hours in seconds (issue 6: a default simulate run in under a minute).
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/air-bench [--visitors N] [--hours H] [--crowd N]
//
// The air runs a venue (`--visitors`, `--hours`; or `--crowd N`: N Herald phones in range for the
// whole hour) with the node's controller scanning continuously; every packet for the host is
// decoded with the host's HCI decoder, as the host would. No host logic runs: this is the cost the
// simulation adds on top of the node.
import BLEHost
import Foundation
import Simulation

var visitors = 100
var hours = 3.0
var crowd: Int? = nil
var i = 1
let arguments = CommandLine.arguments
while i < arguments.count {
    switch arguments[i] {
    case "--visitors": i += 1; visitors = Int(arguments[i]) ?? visitors
    case "--hours": i += 1; hours = Double(arguments[i]) ?? hours
    case "--crowd": i += 1; crowd = Int(arguments[i])
    default: FileHandle.standardError.write(Data("unknown argument \(arguments[i])\n".utf8))
    }
    i += 1
}

let truth: GroundTruth
if let crowd {
    hours = 1
    let venue = VenueConfiguration(visitors: crowd, openingHours: 1, seed: 5, mix: .only(.heraldAndroid), walkPasts: 0, fixedDevices: 0)
    let devices = VenueModel.generate(venue).devices.map { d in
        SimulatedDevice(
            id: d.id, kind: d.kind, owner: d.owner, payload: d.payload, advert: d.advert, advertInterval: d.advertInterval,
            signalWriteInterval: d.signalWriteInterval, rotation: d.rotation, measuredPower: d.measuredPower,
            presence: [PresenceSegment(start: 0, end: 3600, path: .fixed(2 + Double(d.id % 10)))], seed: d.seed)
    }
    truth = GroundTruth(configuration: venue, people: [], devices: devices)
} else {
    truth = VenueModel.generate(VenueConfiguration(visitors: visitors, openingHours: hours, seed: 1))
}

let clock = ContinuousClock()
let started = clock.now
// No host answers here: phones reading the venue payload would only retry.
var air = Air(truth: truth, configuration: AirConfiguration(phonesReadVenue: false))
for command in [Reset().packet, SetEventMask().packet, LESetEventMask().packet, LESetScanEnable(true).packet] {
    air.send(H4Packet(type: .command, body: Array(command.dropFirst())))
}
let end = truth.configuration.closingTime
var events = 0
var reports = 0
while air.now < end {
    for packet in air.advance(until: end) where packet.type == .event {
        events += 1
        if case .le(.advertisingReport(let r))? = try? HCIEvent(decoding: packet.body[...]) { reports += r.count }
    }
}
let c = started.duration(to: clock.now).components
let wall = Double(c.seconds) + Double(c.attoseconds) * 1e-18
print("air-bench: \(truth.devices.count) devices, \(String(format: "%g", hours)) venue hours")
print(String(format: "wall %.2f s; %.0f× real time; %d events, %d reports (%.0f reports/s); adverts heard %d",
             wall, end / wall, events, reports, Double(reports) / wall, air.counters.advertsHeard))
