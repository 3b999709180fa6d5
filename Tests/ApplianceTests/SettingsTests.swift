import VenueDiary
import VenueNode
import Testing
import BLEHost
@testable import Appliance

@Suite struct SettingsTests {
    static let minimal = """
        [venue]
        country = 826
        state = 4
        code = 123123
        name = "Erin's Stakehouse"
        """

    func problems(_ text: String) -> [ConfigProblem] {
        do {
            _ = try Settings.parse(text, file: "test.toml")
            Issue.record("expected the config to be refused")
            return []
        } catch {
            return error.problems
        }
    }

    @Test func defaultsFromAMinimalFile() throws {
        let s = try Settings.parse(Self.minimal, file: "test.toml")
        #expect(s.venue == VenueIdentity(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse"))
        #expect(s.diary.checkInSeconds == 120)
        #expect(s.diary.checkOutSeconds == 300)
        #expect(s.diary.recordingDays == nil)  // unset = keep forever (Herald's nil)
        #expect(s.diary.shareDays == nil)  // unset = share all
        #expect(s.diary.minRSSI == nil)
        #expect(s.diary.maxVisitHours == 12)
        #expect(s.diary.path == "/var/lib/venue-beacon/diary.sqlite")
        #expect(s.export.email == "")
        #expect(s.export.sendmail == "/usr/sbin/sendmail")
        #expect(s.bluetooth == BluetoothSettings())
        #expect(s.herald == HeraldSettings())
        #expect(s.gpio.enabled == false)
        #expect(s.logging.level == "info")
    }

    @Test func shippedExampleIsValidAndMatchesDocumentedDefaults() throws {
        let path = #filePath.replacingOccurrences(of: "Tests/ApplianceTests/SettingsTests.swift", with: "config/venue-beacon.toml")
        let s = try Settings.load(path: path)
        #expect(s.diary.recordingDays == 31)
        #expect(s.diary.shareDays == 14)
        #expect(s.venue.payloadSize == 28)  // the worked example: 9 + 2 + 17
        #expect(s.export.maxEmailMB == ExportSettings.defaultMaxEmailMB)
    }

    @Test func keywordsAndNumbers() throws {
        let s = try Settings.parse(Self.minimal + """

            [diary]
            recording_days = "forever"
            share_days = 0
            min_rssi = -85
            check_in_seconds = 1
            """, file: "t")
        #expect(s.diary.recordingDays == nil)
        #expect(s.diary.shareDays == 0)
        #expect(s.diary.minRSSI == -85)
        #expect(s.diary.checkInSeconds == 1)
        let all = try Settings.parse(Self.minimal + "\n[diary]\nshare_days = \"all\"\nrecording_days = 0\n", file: "t")
        #expect(all.diary.shareDays == nil)
        #expect(all.diary.recordingDays == 0)
    }

    @Test func unknownKeyNamesSectionAllowedKeysAndSuggestion() {
        let p = problems(Self.minimal + "\n[diary]\nchek_out_seconds = 3\n")
        #expect(p.count == 1)
        #expect(p.first?.key == "diary.chek_out_seconds")
        #expect(p.first?.value == "3")
        #expect(p.first?.problem.contains("did you mean check_out_seconds?") == true)
        #expect(p.first?.problem.contains("max_visit_hours") == true)
    }

    @Test func unknownSectionAndTopLevelKey() {
        let p = problems("colour = \"blue\"\n" + Self.minimal + "\n[extras]\nx = 1\n")
        #expect(p.map(\.key) == ["colour", "[extras]"])
        #expect(p.first?.description == "test.toml: colour = \"blue\": unknown key; the file has sections [venue], [diary], [export], [bluetooth], [herald], [gpio], [logging], [schedule], [exposure], [replication]")
    }

    @Test func wrongTypeNamesKeyValueAndAllowed() {
        let p = problems(Self.minimal + "\n[diary]\ncheck_in_seconds = \"two minutes\"\n")
        #expect(p.map(\.description) == [
            "test.toml: diary.check_in_seconds = \"two minutes\": must be a whole number of seconds from 1 to 86400"
        ])
        let f = problems(Self.minimal + "\n[diary]\nmin_rssi = 1.5\n")
        #expect(f.first?.value == "1.5")
    }

    @Test func outOfRangeValues() {
        let p = problems("""
            [venue]
            country = 65536
            state = -1
            code = 4294967296
            name = "x"
            [diary]
            check_out_seconds = 0
            max_visit_hours = 0
            recording_days = "never"
            share_days = -1
            """)
        #expect(p.map(\.key) == [
            "venue.country", "venue.state", "venue.code", "diary.check_out_seconds", "diary.recording_days",
            "diary.share_days", "diary.max_visit_hours",
        ])
        #expect(p.first { $0.key == "diary.recording_days" }?.problem.contains("\"forever\"") == true)
        #expect(p.first { $0.key == "diary.share_days" }?.problem.contains("\"all\"") == true)
    }

    @Test func missingRequiredVenueKeys() {
        let p = problems("[venue]\nname = \"x\"\n")
        #expect(p.map(\.key) == ["venue.country", "venue.state", "venue.code"])
        #expect(p.allSatisfy { $0.value == nil && $0.problem.hasPrefix("is required") })
        let none = problems("")
        #expect(none.map(\.key) == ["venue.country", "venue.state", "venue.code", "venue.name"])
    }

    @Test func sectionThatIsNotATable() {
        let p = problems("diary = 5\n" + Self.minimal)
        #expect(p.first?.key == "diary")
        #expect(p.first?.problem.contains("[diary]") == true)
    }

    @Test func syntaxErrorGivesLineAndColumn() {
        let p = problems("[venue\ncountry = 1\n")
        #expect(p.count == 1)
        #expect(p.first?.key == nil)
        #expect(p.first?.problem.hasPrefix("line 1, column") == true)
    }

    @Test func missingFileIsAClearError() {
        do {
            _ = try Settings.load(path: "/nonexistent/venue-beacon.toml")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("/nonexistent/venue-beacon.toml: no such file"))
        }
    }

    @Test func otherSectionsValidate() {
        let p = problems(Self.minimal + """

            [bluetooth]
            device = "bt0"
            [gpio]
            enabled = "yes"
            button = true
            status_led = "GPIO17"
            [logging]
            level = "loud"
            [export]
            email = "tracers"
            sendmail = "sendmail"
            directory = "media/usb"
            """)
        #expect(p.map(\.key) == [
            "export.email", "export.sendmail", "export.directory", "bluetooth.device", "gpio.enabled", "gpio.button",
            "logging.level",
        ])
    }

    @Test func deviceForms() {
        for ok in ["hci0", "hci12", "hci99", "AA:BB:CC:DD:EE:FF", "unix:/tmp/bt-server-le"] {
            #expect(BluetoothSettings.validateDevice(ok) == nil, "\(ok)")
        }
        for bad in ["hci", "hci+1", "hci-1", "AA:BB:CC:DD:EE", "unix:relative", "/dev/hci0"] {
            #expect(BluetoothSettings.validateDevice(bad) != nil, "\(bad)")
        }
    }

    @Test func payloadOverflowNamesTheField() {
        let long = String(repeating: "x", count: 250)
        let p = problems("""
            [venue]
            country = 1
            state = 1
            code = 1
            name = "\(long)"
            area = "\(long)"
            location = "short"
            """)
        #expect(p.count == 1)
        #expect(p.first?.problem.contains("510") == true)
        #expect(p.first?.key == "venue.name" || p.first?.key == "venue.area")
        let tooLongText = problems(Self.minimal.replacingOccurrences(of: "Erin's Stakehouse", with: String(repeating: "é", count: 128)))
        #expect(tooLongText.first?.problem.contains("255 bytes") == true)
    }

    /// The venue and its beacon payload are one venue: the size is the payload's, and the venue
    /// comes back from the beacon it advertises.
    @Test func theVenueIsItsBeacon() throws {
        let venue = VenueIdentity(
            country: 826, state: 4, code: 123_123, name: "Erin's Stakehouse", location: "Window seating", area: "Gourock",
            url: "https://example.org")
        #expect(try venue.payloadSize == venue.beacon.encoded().count)
        #expect(VenueIdentity(venue.beacon) == venue)
        #expect(VenueIdentity(country: 1, state: 2, code: 3, name: "A", location: "").payloadSize == 9 + 2 + 1)
    }

    @Test func effectiveSettingsReloadToTheSameValues() throws {
        let s = try Settings.parse(Self.minimal + """

            [venue]
            """.replacingOccurrences(of: "[venue]", with: "") + """
            [diary]
            min_rssi = -90
            recording_days = "forever"
            [gpio]
            button = 23
            status_led = "GPIO17"
            [bluetooth]
            btsnoop = "/tmp/hci.btsnoop"
            legacy_service = true
            scan_interval_ms = 60
            scan_window_ms = 60
            [herald]
            payload_update_seconds = 300
            advert_protocol_service = "a6ba4286-c550-4794-a888-9467ef0b31a9"
            log_directory = "/tmp/herald"
            [export]
            email = "a@example.org, b@example.org"
            from = "venue@example.org"
            directory = "/media/usb"
            """, file: "t")
        #expect(s.export.recipients == ["a@example.org", "b@example.org"])
        let again = try Settings.parse(s.effectiveTOML, file: "effective")
        #expect(again == s)
    }

    /// The default sender is venue-beacon@<hostname>, and a Pi's hostname has no dot: the
    /// effective settings `config check` prints must load again.
    @Test func senderOnADotlessHostIsAnAddress() throws {
        #expect(ExportSettings.isAddress("venue-beacon@raspberrypi"))
        #expect(!ExportSettings.isAddress("venue-beacon@"))
        #expect(!ExportSettings.isAddress("@raspberrypi"))
        let s = try Settings.parse(Self.minimal + "\n[export]\nfrom = \"venue-beacon@raspberrypi\"\n", file: "t")
        #expect(try Settings.parse(s.effectiveTOML, file: "effective") == s)
    }

    @Test func configPathResolution() {
        #expect(Settings.resolvePath(explicit: "/a.toml", environment: ["VENUE_BEACON_CONFIG": "/b.toml"]) == "/a.toml")
        #expect(Settings.resolvePath(explicit: nil, environment: ["VENUE_BEACON_CONFIG": "/b.toml"]) == "/b.toml")
        #expect(Settings.resolvePath(explicit: nil, environment: [:]) == "/etc/venue-beacon/venue-beacon.toml")
    }

    @Test func exportDeliveryKeys() throws {
        let s = try Settings.parse(Self.minimal, file: "t")
        #expect(s.export.outbox == "/var/lib/venue-beacon/outbox")
        #expect(s.export.requireMount)
        #expect(s.export.retrySeconds == 60)
        #expect(s.export.retryMaxSeconds == 3600)
        let p = problems(Self.minimal + "\n[export]\noutbox = \"outbox\"\nretry_seconds = 600\nretry_max_seconds = 60\nrequire_mount = 1\n")
        #expect(p.map(\.key) == ["export.require_mount", "export.outbox", "export.retry_max_seconds"])
        #expect(p.last?.problem == "must be at least retry_seconds (600)")
        #expect(s.export.maxEmailMB == 20)
        let big = problems(Self.minimal + "\n[export]\nmax_email_mb = 0\n")
        #expect(big.map(\.key) == ["export.max_email_mb"])
        #expect(big.first?.problem == "must be a whole number of MB from 1 to 1000")
    }

    @Test func bluetoothAndHeraldDefaultsAreHeraldsAndLeaveAirtimeForWiFi() throws {
        let s = try Settings.parse(Self.minimal, file: "t")
        #expect(s.bluetooth.btsnoop == nil)
        #expect(s.bluetooth.legacyService == false)
        #expect(s.bluetooth.advertisingIntervalMS == 200)
        #expect(s.bluetooth.scanDutyPercent == 50)
        #expect(s.bluetooth.maxConnections == 8)
        #expect(s.herald.connectionTimeoutSeconds == 12)
        #expect(s.herald.payloadUpdateSeconds == nil)
        #expect(s.herald.peripheralCleanSeconds == 1800)
        #expect(s.herald.payloadSharing)
        #expect(s.herald.gaen)
        #expect(!s.herald.openTrace)
        #expect(s.herald.advertProtocolService == nil)
        #expect(s.herald.logDirectory == nil)
        #expect(s.herald.logBudgetMB == 4000)
        #expect(s.herald.logBudgetBytes == 4_000_000_000)
    }

    @Test func bluetoothAndHeraldKeys() throws {
        let s = try Settings.parse(Self.minimal + """

            [bluetooth]
            device = "unix:/tmp/bt-server-le"
            btsnoop = "/var/lib/venue-beacon/hci.btsnoop"
            legacy_service = true
            advertising_interval_ms = 100
            scan_interval_ms = 40
            scan_window_ms = 40
            max_connections = 2
            [herald]
            connection_timeout_seconds = 5
            payload_update_seconds = 600
            peripheral_clean_seconds = 60
            payload_sharing = false
            gaen = false
            opentrace = true
            advert_protocol_service = "fd6f"
            log_directory = "/var/lib/venue-beacon/herald"
            log_budget_mb = 500
            """, file: "t")
        #expect(s.bluetooth == BluetoothSettings(
            device: "unix:/tmp/bt-server-le", btsnoop: "/var/lib/venue-beacon/hci.btsnoop", legacyService: true,
            advertisingIntervalMS: 100, scanIntervalMS: 40, scanWindowMS: 40, maxConnections: 2))
        #expect(s.bluetooth.scanDutyPercent == 100)
        #expect(s.herald == HeraldSettings(
            connectionTimeoutSeconds: 5, payloadUpdateSeconds: 600, peripheralCleanSeconds: 60, payloadSharing: false,
            gaen: false, openTrace: true, advertProtocolService: BluetoothUUID(UInt16(0xFD6F)),
            logDirectory: "/var/lib/venue-beacon/herald", logBudgetMB: 500))
        #expect(s.herald.logBudgetBytes == 500_000_000)
        let never = try Settings.parse(Self.minimal + "\n[herald]\npayload_update_seconds = \"never\"\n", file: "t")
        #expect(never.herald.payloadUpdateSeconds == nil)
    }

    @Test func bluetoothAndHeraldMistakes() {
        let p = problems(Self.minimal + """

            [bluetooth]
            btsnoop = "capture.btsnoop"
            legacy_service = "yes"
            advertising_interval_ms = 10
            scan_interval_ms = 50
            scan_window_ms = 100
            max_connections = 1
            [herald]
            connection_timeout_seconds = 0
            payload_update_seconds = "sometimes"
            peripheral_clean_seconds = 5
            payload_sharing = 1
            advert_protocol_service = "FD6F"
            log_directory = "herald"
            """)
        #expect(p.map(\.key) == [
            "bluetooth.btsnoop", "bluetooth.legacy_service", "bluetooth.advertising_interval_ms", "bluetooth.scan_window_ms",
            "bluetooth.max_connections", "herald.connection_timeout_seconds", "herald.payload_update_seconds",
            "herald.peripheral_clean_seconds", "herald.payload_sharing", "herald.advert_protocol_service", "herald.log_directory",
        ])
        #expect(p.first { $0.key == "bluetooth.scan_window_ms" }?.problem == "must be at most scan_interval_ms (50); equal values scan all the time")
        #expect(p.first { $0.key == "herald.payload_update_seconds" }?.problem.contains("\"never\"") == true)
        // FD6F is GAEN's: with gaen on it would never be reported as kind advert.
        #expect(p.first { $0.key == "herald.advert_protocol_service" }?.problem.contains("gaen = false") == true)
        for bad in ["FD6", "0xFD6F0", "1234abcd", "not-a-uuid"] {
            let q = problems(Self.minimal + "\n[herald]\nadvert_protocol_service = \"\(bad)\"\n")
            #expect(q.map(\.key) == ["herald.advert_protocol_service"], "\(bad)")
        }
    }

    /// `log_budget_mb`: whole MB from 10 to 1,000,000; anything else names the key and what it takes.
    @Test func logBudgetIsWholeMegabytesInItsRange() throws {
        for (text, mb) in [("10", 10), ("4000", 4000), ("1000000", 1_000_000)] {
            let s = try Settings.parse(Self.minimal + "\n[herald]\nlog_budget_mb = \(text)\n", file: "t")
            #expect(s.herald.logBudgetMB == mb, "\(text)")
        }
        for bad in ["9", "0", "-1", "1000001", "4.5", "\"4000\"", "true"] {
            let p = problems(Self.minimal + "\n[herald]\nlog_budget_mb = \(bad)\n")
            #expect(p.map(\.key) == ["herald.log_budget_mb"], "\(bad)")
            #expect(p.first?.value == bad, "\(bad)")
            #expect(p.first?.problem == "must be a whole number of MB from 10 to 1000000", "\(bad)")
        }
        let typo = problems(Self.minimal + "\n[herald]\nlog_budget = 100\n")
        #expect(typo.first?.problem.contains("did you mean log_budget_mb?") == true)
    }

    @Test func nodeSettingsReachTheHostAndTheNode() throws {
        let s = try Settings.parse(Self.minimal + """

            [bluetooth]
            legacy_service = true
            advertising_interval_ms = 20
            scan_interval_ms = 10240
            scan_window_ms = 3
            max_connections = 5
            [herald]
            connection_timeout_seconds = 7
            payload_update_seconds = 900
            peripheral_clean_seconds = 120
            payload_sharing = false
            gaen = false
            opentrace = true
            advert_protocol_service = "FD6F"
            """, file: "t")
        let setup = s.nodeSetup
        #expect(setup.scanning.interval == 0x4000 && setup.scanning.window == 5 && setup.scanning.type == .passive)
        #expect(setup.advertising.intervalMin == 32 && setup.advertising.intervalMax == 32)
        #expect(setup.advertising.type == .connectableUndirected)
        #expect(setup.maxConnections == 5 && setup.node.connectionAttemptTimeout == 7)
        let node = setup.nodeConfiguration
        #expect(node.connectionAttemptTimeout == 7 && node.payloadUpdateInterval == 900 && node.peripheralCleanInterval == 120)
        #expect(!node.payloadSharing && node.concurrentConnectionQuota == 4)
        #expect(!setup.classifier.gaen && setup.classifier.openTrace && setup.classifier.advertProtocolService == BluetoothUUID(UInt16(0xFD6F)))
        let identity = try setup.identity()
        #expect(identity.payload.count == 28 && identity.legacyService && identity.name == "Erin's Stakehouse")
        // One setting, one deadline: the host's default for an attempt is the node's.
        #expect(try setup.hostConfiguration(identity: identity, gate: SignalWriteGate()).linkManager.connectTimeout == .seconds(7))

        let defaults = try Settings.parse(Self.minimal, file: "t").nodeSetup
        #expect(defaults.scanning.interval == 160 && defaults.scanning.window == 80)  // 100 ms, 50 ms
        #expect(defaults.advertising.intervalMin == 320)  // 200 ms
        #expect(defaults.nodeConfiguration.concurrentConnectionQuota == 7)
        #expect(defaults.nodeConfiguration.payloadUpdateInterval == nil)
        // The simulation's default node is the default config's, but for the venue it advertises.
        let simulated = NodeSetup()
        #expect(simulated.advertising == defaults.advertising && simulated.scanning == defaults.scanning)
        #expect(simulated.maxConnections == defaults.maxConnections && simulated.node.connectionAttemptTimeout == defaults.node.connectionAttemptTimeout)
        #expect(simulated.nodeConfiguration == defaults.nodeConfiguration && simulated.classifier == defaults.classifier)
        #expect(simulated.diary.checkInSeconds == defaults.diary.checkInSeconds && simulated.diary.checkOutSeconds == defaults.diary.checkOutSeconds)
        #expect(simulated.diary.minRSSI == defaults.diary.minRSSI && simulated.diary.maxVisitSeconds == defaults.diary.maxVisitSeconds)
    }
}
