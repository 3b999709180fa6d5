import Foundation
import Testing
@testable import Replication

@Suite struct HomeAssistantDiscoveryTests {
    @Test func threeSensorsPerNodeUnderItsOwnLoginLevelWithTheStatusAsAvailability() throws {
        let configs = HomeAssistantDiscovery.configs(node: "room-2", venueCode: 123123, venueName: "Erin's \"Stake\" house")
        #expect(configs.map(\.topic) == [
            "homeassistant/sensor/room-2/present/config", "homeassistant/sensor/room-2/checked_in_today/config",
            "homeassistant/sensor/room-2/hub_backlog/config",
        ])
        var uniqueIDs = Set<String>()
        for config in configs {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
            #expect(object["state_topic"] as? String == "venue-beacon/node/room-2/ha/state")
            #expect(object["availability_topic"] as? String == "venue-beacon/node/room-2/status")
            let device = try #require(object["device"] as? [String: Any])
            #expect(device["name"] as? String == "Erin's \"Stake\" house room-2")
            uniqueIDs.insert(try #require(object["unique_id"] as? String))
        }
        #expect(uniqueIDs == ["venue_beacon_123123_room_2_present", "venue_beacon_123123_room_2_checked_in_today", "venue_beacon_123123_room_2_hub_backlog"])
    }

    @Test func theStateIsCountsOnly() throws {
        let state = HomeAssistantDiscovery.state(node: "hall", present: 3, checkedInToday: 41, backlog: 0)
        #expect(state.topic == "venue-beacon/node/hall/ha/state")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(state.payload)) as? [String: Int])
        #expect(object == ["present": 3, "checked_in_today": 41, "backlog": 0])
    }

    @Test func controlCharactersInTheVenueNameAreEscaped() throws {
        let config = try #require(HomeAssistantDiscovery.configs(node: "hall", venueCode: 1, venueName: "a\u{1}b").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
        #expect((object["device"] as? [String: Any])?["name"] as? String == "a\u{1}b hall")
    }
}
