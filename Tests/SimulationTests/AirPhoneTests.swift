import BLEHost
import Herald
import Testing

@testable import Simulation

/// Phones on the simulated air over a link with the node's virtual controller: a link ends when
/// its phone walks away, a phone that cannot advertise writes its payload, Herald phones read
/// the venue's payload once per stay.
extension AirTests {
    @Test func aLinkEndsWhenThePhoneWalksAway() throws {
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 20)
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: Self.noFailures))
        host.initialise()
        host.run(until: 2)
        let handle = try #require(Self.connect(&host, to: phone))
        let lost = host.wait(until: 60) {
            if case .disconnectionComplete = $0 { return true }
            return false
        }
        guard case .disconnectionComplete(let d)? = lost?.event else {
            Issue.record("link never lost")
            return
        }
        #expect(d.handle == handle && d.reason == .connectionTimeout)
        #expect(lost!.time == 20 + AirConfiguration().supervisionTimeout)
    }

    @Test func aPhoneThatCannotAdvertiseConnectsAndWritesItsPayloadThenItsRSSI() throws {
        let writer = Self.phone(0, .heraldAndroidWriter, from: 0, to: 60)
        var host = ScriptedHost(Air(truth: Self.truth([writer]), configuration: Self.noFailures))
        host.initialise()
        // Connectable advertising without the Herald service attracts nobody.
        _ = host.command(LESetAdvertisingParameters())
        _ = host.command(LESetAdvertisingEnable(true))
        host.run(until: 10)
        #expect(host.air.counters.phoneSessions == 0)
        // The node advertises its Herald service, and serves its signal characteristic.
        _ = host.command(LESetAdvertisingEnable(false))
        _ = host.command(LESetAdvertisingData(Self.heraldAdvert))
        _ = host.command(LESetAdvertisingEnable(true))
        let node = try GATTDatabase(
            deviceName: "venue",
            services: [
                GATTServiceDescription(
                    uuid: HeraldUUIDs.service,
                    characteristics: [
                        .init(uuid: HeraldUUIDs.androidSignalCharacteristic, properties: [.write, .writeWithoutResponse]),
                        .init(uuid: HeraldUUIDs.payloadCharacteristic, properties: .read, value: .fixed([0x30, 1, 2, 3, 4, 5, 6, 7, 8])),
                    ])
            ])
        var writes: [SignalWrite] = []
        var sessions = 0
        while host.air.now < 40 {
            guard case .le(.connectionComplete(let c))? = host.wait(until: 40, for: {
                if case .le(.connectionComplete) = $0 { return true } else { return false }
            })?.event else { break }
            sessions += 1
            #expect(c.role == .peripheral && c.status == .success)
            var server = GATTConnection(link: c.handle)
            let actions = host.gatt(&server, handle: c.handle, database: node, first: [], until: host.air.now + 10) { actions in
                actions.contains { if case .write = $0 { return true } else { return false } }
            }
            for case .write(let w) in actions { writes.append(try SignalWrite(decoding: w.value)) }
            let gone = host.wait(until: host.air.now + 2) {
                if case .disconnectionComplete = $0 { return true } else { return false }
            }
            if case .disconnectionComplete(let d)? = gone?.event { #expect(d.reason == .remoteUserTerminated) }
            // Advertising stopped when the phone connected; the host turns it on again.
            _ = host.command(LESetAdvertisingEnable(true))
        }
        #expect(sessions >= 5)
        let payload = try #require(writer.payload)
        #expect(writes.first == .payload(payload))
        #expect(writes.dropFirst().allSatisfy { if case .rssi = $0 { return true } else { return false } })
        #expect(writes.count == sessions)
    }

    @Test func heraldPhonesReadTheVenuePayloadOncePerStay() throws {
        let phones = [
            Self.phone(0, .heraldIPhoneBackground, from: 0, to: 120),
            Self.phone(1, .heraldAndroid, from: 0, to: 120),
            Self.phone(2, .gaenPhone, from: 0, to: 120),
        ]
        var config = Self.noFailures
        config.phonesReadVenue = true
        var host = ScriptedHost(Air(truth: Self.truth(phones), configuration: config))
        host.initialise()
        _ = host.command(LESetAdvertisingParameters())
        _ = host.command(LESetAdvertisingData(Self.heraldAdvert))
        _ = host.command(LESetAdvertisingEnable(true))
        let venue: [UInt8] = [0x30, 0x3A, 0x03, 0x04, 0x00, 0xF3, 0xE0, 0x01, 0x00]
        let node = try GATTDatabase(
            deviceName: "venue",
            services: [
                GATTServiceDescription(
                    uuid: HeraldUUIDs.service,
                    characteristics: [
                        .init(uuid: HeraldUUIDs.androidSignalCharacteristic, properties: [.write, .writeWithoutResponse]),
                        .init(uuid: HeraldUUIDs.payloadCharacteristic, properties: .read, value: .fixed(venue)),
                    ])
            ])
        var peers: [BluetoothAddress] = []
        while host.air.now < 100 {
            guard case .le(.connectionComplete(let c))? = host.wait(until: 100, for: {
                if case .le(.connectionComplete) = $0 { return true } else { return false }
            })?.event else { break }
            peers.append(c.peerAddress)
            var server = GATTConnection(link: c.handle)
            // A few seconds of serving: discovery and the read take a handful of connection events.
            _ = host.gatt(&server, handle: c.handle, database: node, first: [], until: host.air.now + 3) { _ in false }
            _ = host.wait(until: host.air.now + 2) { if case .disconnectionComplete = $0 { return true } else { return false } }
            _ = host.command(LESetAdvertisingEnable(true))
        }
        // The two Herald phones, once each; the GAEN phone never.
        #expect(host.air.counters.venueReads == 2)
        #expect(host.air.venuePayloadRead == venue)
        #expect(Set(peers).count == 2 && peers.count == 2)
    }
}
