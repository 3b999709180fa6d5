import BLEHost
import Foundation
import Testing

extension RadioTests {
    /// Issue 15, item 4, on the emulated air: hostile or stalled peers cannot keep the node from
    /// reading and recording real phones. `venue-beacon run` with its defaults
    /// (`idle_link_seconds = 20`, the node's GATT requests timing out at 10 s) and
    /// `max_connections = 2`; Bumble plays every peer.
    ///
    /// btvirt numbers a link 42 + the links its initiator already has, on both sides, and mixes
    /// up its links once a node holds links it accepted and links it made, or two centrals
    /// arrive under one handle. So each test here keeps to what the emulator models (one peer's
    /// link at a time each way); several hostile links at once are shown against the scripted
    /// controller (`HostEngineIdleLinkTests`).
    @Suite struct HostilePeerRadioTests {
        /// A hostile central connects and holds its link without a read or a write: the node
        /// drops it at the 20 s idle limit, refuses it when it comes straight back (its second
        /// link lasts under 2 s), and a phone that cannot advertise then connects, writes its
        /// payload and its RSSI every second for 26 s (longer than the idle limit: valid writes
        /// keep a link) and is recorded. Before the fix the holder keeps its link for good.
        @Test func aHostileCentralIsDroppedAtTheIdleLimitAndRefusedWhileAWritingPhoneStays() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start(checkIn: 2, checkOut: 120, bluetoothExtra: "max_connections = 2")
                defer { node.remove() }
                let holder = try btvirt.bumble("link_holder.py", ["F0:F1:F2:F3:F4:E1", "90", "2"])
                try await holder.waitForOutput("CONNECTED", timeout: .seconds(30))
                // Bound: the idle limit (20 s) plus slack for a busy machine.
                let held = try await holder.waitForOutput("DISCONNECTED after", timeout: .seconds(40))
                let first = try #require(Self.linkSeconds(held).first, "\(held)")
                #expect(first >= 15 && first < 40, "the holder kept its link \(first) s")
                try await holder.waitForOutput("DONE", timeout: .seconds(30))
                let again = Self.linkSeconds(holder.output).dropFirst()
                #expect(again.count == 1 && again.allSatisfy { $0 < 2 }, "the holder's link after its drop: \(again)\n\(holder.output)")

                let own = testPayload(5)
                let writer = try btvirt.bumble("venue_client.py", ["report", Hex.encode(own), "26"])
                #expect(try await writer.waitForExit(timeout: .seconds(60)) == 0, "\(writer.output)")
                #expect(!writer.output.contains("ERROR"), "\(writer.output)")
                #expect(writer.output.components(separatedBy: "OK\n").count - 1 >= 20, "\(writer.output)")
                _ = try await node.waitForVisits("the writer's visit") { $0.contains { $0.payload == Hex.encode(own) } }
                #expect(try await node.terminate().status == 0)
            }
        }

        /// A hostile phone (advertising as a Herald Android phone) takes the node's one
        /// connection slot (`max_connections = 2` leaves it one) and never answers an ATT
        /// request, so the node's MTU exchange stalls; a legitimate phone appears right after.
        /// The bound stated in docs/node.md: the legitimate phone is read within 25 s of
        /// appearing (the 10 s request timeout frees the slot, then one attempt and a read:
        /// about 11 s here) and its visit recorded; the stalled link closes within 25 s of
        /// opening. Before the fix the stalled link lasts ATT's 30 s and the phone is read after
        /// about 31 s.
        @Test func aStalledReadIsAbandonedAtTheRequestTimeoutAndAPhoneReadWithinTheBound() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start(checkIn: 2, checkOut: 120, bluetoothExtra: "max_connections = 2")
                defer { node.remove() }
                let staller = try btvirt.bumble(
                    "herald_phone.py", [
                        "android", Hex.encode(testPayload(9)), "90", "att=silent", "address=C0:00:00:00:00:09", "pseudo=0a0b0c0d0e09",
                    ])
                try await staller.waitForOutput("ATT-IGNORED 02", timeout: .seconds(30))  // the node's slot is held
                let payload = Hex.encode(testPayload(7))
                let appeared = ContinuousClock.now
                let phone = try btvirt.bumble(
                    "herald_phone.py", ["android", payload, "90", "address=C0:00:00:00:00:07", "pseudo=0a0b0c0d0e07"])
                do {
                    try await phone.waitForOutput("\nREAD\n", timeout: .seconds(25))  // not READY
                } catch {
                    Issue.record("the phone was not read within 25 s: \(error)\nstaller:\n\(staller.output)")
                    return
                }
                let readAfter = ContinuousClock.now - appeared
                _ = try await node.waitForVisits("the phone's visit") { $0.contains { $0.payload == payload } }
                let stalled = try await staller.waitForOutput("DISCONNECTED after", timeout: .seconds(30))
                let lasted = try #require(Self.linkSeconds(stalled).first, "\(stalled)")
                #expect(lasted < 25, "the stalled link lasted \(lasted) s")
                print("stalled phone: its link lasted \(lasted) s; the legitimate phone was read \(readAfter) after appearing")
                #expect(try await node.terminate().status == 0)
            }
        }

        /// How long each link lasted, from the "DISCONNECTED after N s" lines.
        static func linkSeconds(_ output: String) -> [Double] {
            output.split(separator: "\n").filter { $0.hasPrefix("DISCONNECTED after ") }.compactMap {
                Double($0.dropFirst("DISCONNECTED after ".count).split(separator: " ").first ?? "")
            }
        }
    }
}
