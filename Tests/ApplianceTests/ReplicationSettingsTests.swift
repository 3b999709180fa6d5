import Foundation
import Testing
@testable import Appliance

/// A node's `[replication]` and the hub's config file.
@Suite struct ReplicationSettingsTests {
    static let minimal = SettingsTests.minimal

    func problems(_ text: String) -> [ConfigProblem] {
        do {
            _ = try Settings.parse(text, file: "test.toml")
            Issue.record("expected the config to be refused")
            return []
        } catch {
            return error.problems
        }
    }

    func hubProblems(_ text: String) -> [ConfigProblem] {
        do {
            _ = try HubConfig.parse(text, file: "hub.toml")
            Issue.record("expected the hub config to be refused")
            return []
        } catch {
            return error.problems
        }
    }

    func replication(_ keys: String) -> String { Self.minimal + "\n[replication]\n" + keys + "\n" }

    /// A private directory (only its owner may write: the config and password files must be trusted).
    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replication-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        return path
    }

    func write(_ text: String, to path: String, mode: Int = 0o600) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
    }

    @Test func withoutTheSectionNothingIsReplicated() throws {
        let s = try Settings.parse(Self.minimal, file: "t")
        #expect(s.replication == nil)
        #expect(!s.effectiveTOML.contains("[replication]"))
    }

    @Test func aNodeConfigRoundTripsThroughTheEffectiveSettings() throws {
        let s = try Settings.parse(replication("""
            broker = "mqtts://hub.local"
            node = "room-2"
            username = "room-2"
            password_file = "/etc/venue-beacon/broker.password"
            ca_file = "/etc/venue-beacon/venue-ca.crt"
            home_assistant = true
            """), file: "t")
        #expect(s.replication == ReplicationSettings(
            broker: BrokerAddress(tls: true, host: "hub.local", port: 8883), node: "room-2", username: "room-2",
            passwordFile: "/etc/venue-beacon/broker.password", caFile: "/etc/venue-beacon/venue-ca.crt", homeAssistant: true))
        #expect(s.effectiveTOML.contains("[replication]\nbroker = \"mqtts://hub.local:8883\"\n"))
        let again = try Settings.parse(s.effectiveTOML, file: "effective")
        #expect(again == s)

        // The optional keys left out: their defaults, and commented lines that load again.
        let plain = try Settings.parse(replication("broker = \"mqtt://192.168.1.10\"\nnode = \"hall\""), file: "t")
        #expect(plain.replication == ReplicationSettings(
            broker: BrokerAddress(tls: false, host: "192.168.1.10", port: 1883), node: "hall", username: "hall",
            passwordFile: nil, caFile: nil, homeAssistant: false))
        #expect(plain.effectiveTOML.contains("# password_file is not set"))
        #expect(try Settings.parse(plain.effectiveTOML, file: "effective") == plain)
    }

    @Test func usernameDefaultsToTheNodeName() throws {
        let s = try Settings.parse(replication("broker = \"mqtt://hub\"\nnode = \"bar-1\""), file: "t")
        #expect(s.replication?.username == "bar-1")
        #expect(s.notes.allSatisfy { !$0.contains("replication.username") })
        let other = try Settings.parse(replication("broker = \"mqtt://hub\"\nnode = \"bar-1\"\nusername = \"pi.bar\""), file: "t")
        #expect(other.replication?.username == "pi.bar")
        #expect(other.replication?.node == "bar-1")
        // The shipped ACL lets a login publish only under its own name: said, not refused.
        #expect(other.notes.contains { $0.contains("replication.username (pi.bar) is not replication.node (bar-1)") })
    }

    @Test func brokerAddresses() throws {
        let good: [(String, BrokerAddress)] = [
            ("mqtt://hub.local", BrokerAddress(tls: false, host: "hub.local", port: 1883)),
            ("mqtt://hub.local:1884", BrokerAddress(tls: false, host: "hub.local", port: 1884)),
            ("mqtts://hub", BrokerAddress(tls: true, host: "hub", port: 8883)),
            ("mqtts://10.0.0.2:65535", BrokerAddress(tls: true, host: "10.0.0.2", port: 65535)),
            ("mqtt://[fd00::1]:1", BrokerAddress(tls: false, host: "fd00::1", port: 1)),
            ("MQTT://Hub_1", BrokerAddress(tls: false, host: "Hub_1", port: 1883)),
        ]
        for (text, address) in good {
            #expect(try BrokerAddress.parse(text).get() == address, "\(text)")
            #expect(try BrokerAddress.parse(address.description).get() == address, "\(text)")
        }
        #expect(BrokerAddress(tls: false, host: "fd00::1", port: 1).description == "mqtt://[fd00::1]:1")
        let bad = [
            "http://x", "hub.local", "mqtt://", "mqtt://:1883", "mqtt://hub:0", "mqtt://hub:65536", "mqtt://hub:",
            "mqtt://hub:-1", "mqtt://hub:+1", "mqtt://hub/topic", "mqtt://user@hub", "mqtt://hub..local", "mqtt://-hub",
            "mqtt://hüb", "mqtt://hub local", "mqtt://[fd00::1", "mqtt://[hub]", "mqtt://[fd00::1]x", "mqtt://hub:1883:1",
        ]
        for text in bad {
            #expect(throws: BrokerAddress.Problem.self, "\(text)") { try BrokerAddress.parse(text).get() }
        }
    }

    @Test func eachBadValueNamesItsKey() {
        let cases: [(keys: String, key: String, value: String?, says: String)] = [
            ("broker = \"http://x\"\nnode = \"hall\"", "replication.broker", "\"http://x\"", "not an mqtt:// or mqtts:// address"),
            ("broker = \"mqtt://hub:70000\"\nnode = \"hall\"", "replication.broker", "\"mqtt://hub:70000\"", "port must be a whole number from 1 to 65535"),
            ("broker = \"mqtt://hub:0\"\nnode = \"hall\"", "replication.broker", "\"mqtt://hub:0\"", "from 1 to 65535"),
            ("broker = 1883\nnode = \"hall\"", "replication.broker", "1883", "must be a string"),
            ("node = \"hall\"", "replication.broker", nil, "is required"),
            ("broker = \"mqtt://hub\"\nnode = \"Hall\"", "replication.node", "\"Hall\"", "lowercase letters, digits and -"),
            ("broker = \"mqtt://hub\"\nnode = \"a_b\"", "replication.node", "\"a_b\"", "1 to 32 lowercase letters"),
            ("broker = \"mqtt://hub\"\nnode = \"\"", "replication.node", "\"\"", "1 to 32 lowercase letters"),
            ("broker = \"mqtt://hub\"\nnode = \"-hall\"", "replication.node", "\"-hall\"", "starting with a letter or digit"),
            ("broker = \"mqtt://hub\"\nnode = \"\(String(repeating: "a", count: 33))\"", "replication.node", nil, "1 to 32"),
            ("broker = \"mqtt://hub\"\nnode = \"hub\"", "replication.node", "\"hub\"", "the hub's login"),
            ("broker = \"mqtt://hub\"", "replication.node", nil, "is required"),
            ("broker = \"mqtt://hub\"\nnode = \"hall\"\nusername = \"a/b\"", "replication.username", "\"a/b\"", "no /, + or #"),
            ("broker = \"mqtt://hub\"\nnode = \"hall\"\nusername = \"hub\"", "replication.username", "\"hub\"", "the hub's login"),
            ("broker = \"mqtts://hub\"\nnode = \"hall\"", "replication.ca_file", nil, "is required for an mqtts:// broker"),
            (
                "broker = \"mqtt://hub\"\nnode = \"hall\"\nca_file = \"/etc/venue-beacon/venue-ca.crt\"", "replication.ca_file",
                "\"/etc/venue-beacon/venue-ca.crt\"", "only for an mqtts:// broker"
            ),
            (
                "broker = \"mqtts://hub\"\nnode = \"hall\"\nca_file = \"venue-ca.crt\"", "replication.ca_file", "\"venue-ca.crt\"",
                "absolute path"
            ),
            (
                "broker = \"mqtt://hub\"\nnode = \"hall\"\npassword_file = \"broker.password\"", "replication.password_file",
                "\"broker.password\"", "must be the absolute path of a file"
            ),
            ("broker = \"mqtt://hub\"\nnode = \"hall\"\nhome_assistant = \"yes\"", "replication.home_assistant", "\"yes\"", "true or false"),
            ("broker = \"mqtt://hub\"\nnode = \"hall\"\nhomeassistant = true", "replication.homeassistant", "true", "did you mean home_assistant?"),
        ]
        for (keys, key, value, says) in cases {
            let p = problems(replication(keys))
            #expect(p.map(\.key) == [key], "\(keys)")
            if let value { #expect(p.first?.value == value, "\(keys)") }
            #expect(p.first?.problem.contains(says) == true, "\(keys): \(p.first?.problem ?? "")")
        }
        // The whole message: file, key, value, and what is allowed.
        #expect(problems(replication("broker = \"http://x\"\nnode = \"hall\"")).first?.description
            == "test.toml: replication.broker = \"http://x\": it is not an mqtt:// or mqtts:// address; the broker "
            + "must be mqtt://HOST or mqtts://HOST (TLS), with an optional :PORT (default 1883, or 8883 for mqtts), "
            + "such as \"mqtt://hub.local\" or \"mqtts://192.168.1.10:8883\"")
        // Every key, once, in the unknown key's message.
        #expect(problems(replication("broker = \"mqtts://hub\"\nnode = \"hall\"\nca_file = \"/ca.crt\"\nkeepalive_seconds = 60")).first?.problem
            == "unknown key; [replication] allows broker, node, username, password_file, ca_file, home_assistant")
        let notATable = problems("replication = \"mqtt://hub\"\n" + Self.minimal)
        #expect(notATable.map(\.key) == ["replication"])
    }

    @Test func thePasswordFileMustExistBeReadableAndTrusted() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/venue-beacon.toml"
        let passwordFile = directory + "/broker.password"
        try write(replication("broker = \"mqtt://hub\"\nnode = \"hall\"\npassword_file = \"\(passwordFile)\""), to: config)

        // Missing.
        do {
            _ = try Settings.load(path: config)
            Issue.record("a missing password file was accepted")
        } catch {
            #expect(error.problems.map(\.key) == ["replication.password_file"])
            #expect(error.problems.first?.value == "\"\(passwordFile)\"")
            #expect(error.problems.first?.problem.hasPrefix("no such file") == true)
        }

        // Writable by others.
        try write("s3cret\n", to: passwordFile, mode: 0o666)
        #expect(chmod(passwordFile, 0o666) == 0)  // past the umask
        do {
            _ = try Settings.load(path: config)
            Issue.record("a password file others can change was accepted")
        } catch {
            #expect(error.problems.map(\.key) == ["replication.password_file"])
            #expect(error.problems.first?.problem.contains("chmod go-w") == true)
        }

        // Fine: its first line is the password.
        #expect(chmod(passwordFile, 0o600) == 0)
        try write("s3cret\r\nsecond line\n", to: passwordFile)
        let s = try Settings.load(path: config)
        #expect(try s.replication?.password() == "s3cret")
        // Its text is never in an error.
        try write("\nleaked\n", to: passwordFile)
        do {
            _ = try s.replication?.password()
            Issue.record("an empty first line was taken as the password")
        } catch {
            #expect("\(error)".contains(passwordFile) && "\(error)".contains("first line is empty") && !"\(error)".contains("leaked"))
        }
        #expect(try ReplicationSettings(broker: BrokerAddress(tls: false, host: "h", port: 1883), node: "hall").password() == nil)
        // A directory is no password file.
        try write(replication("broker = \"mqtt://hub\"\nnode = \"hall\"\npassword_file = \"\(directory)\""), to: config)
        #expect(throws: ConfigError.self) { try Settings.load(path: config) }
    }

    @Test func theCAFileMustExist() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/venue-beacon.toml"
        try write(replication("broker = \"mqtts://hub\"\nnode = \"hall\"\nca_file = \"\(directory)/ca.crt\""), to: config)
        do {
            _ = try Settings.load(path: config)
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(error.problems.map(\.key) == ["replication.ca_file"])
        }
        try write("-----BEGIN CERTIFICATE-----\n", to: directory + "/ca.crt", mode: 0o644)
        #expect(try Settings.load(path: config).replication?.caFile == directory + "/ca.crt")
    }

    // MARK: - The hub

    static let hubMinimal = minimal + "\n[hub]\nbroker = \"mqtt://localhost\"\n"

    @Test func hubDefaults() throws {
        let config = try HubConfig.parse(Self.hubMinimal, file: "hub.toml")
        #expect(config.hub == HubSettings(
            store: "/var/lib/venue-beacon/hub.sqlite", broker: BrokerAddress(tls: false, host: "localhost", port: 1883), username: "hub",
            passwordFile: nil, caFile: nil))
        #expect(config.venue.code == 123123)
        #expect(config.diary.checkOutSeconds == 300)
        #expect(config.diary.path == "")  // unused: the hub keeps its visits in [hub] store
        #expect(config.logging.level == "info")
        #expect(try config.hub.password() == nil)
        #expect(!config.effectiveTOML.contains("path = "))
        #expect(try HubConfig.parse(config.effectiveTOML, file: "effective") == config)
    }

    @Test func hubKeysRoundTrip() throws {
        let config = try HubConfig.parse(Self.minimal + """

            [diary]
            check_out_seconds = 600
            recording_days = 21
            share_days = 14
            [export]
            email = "tracing@example.org"
            [logging]
            level = "debug"
            [hub]
            store = "/srv/venue/hub.sqlite"
            broker = "mqtts://hub.venue.example:8884"
            username = "collector"
            password_file = "/etc/venue-beacon/hub.password"
            ca_file = "/etc/venue-beacon/venue-ca.crt"
            """, file: "hub.toml")
        #expect(config.hub == HubSettings(
            store: "/srv/venue/hub.sqlite", broker: BrokerAddress(tls: true, host: "hub.venue.example", port: 8884), username: "collector",
            passwordFile: "/etc/venue-beacon/hub.password", caFile: "/etc/venue-beacon/venue-ca.crt"))
        #expect(config.diary.checkOutSeconds == 600 && config.diary.recordingDays == 21 && config.diary.shareDays == 14)
        #expect(config.export.email == "tracing@example.org")
        #expect(config.logging.level == "debug")
        #expect(try HubConfig.parse(config.effectiveTOML, file: "effective") == config)
    }

    @Test func aHubHasNoDiaryPath() {
        let p = hubProblems(Self.hubMinimal + "\n[diary]\npath = \"/var/lib/venue-beacon/diary.sqlite\"\n")
        #expect(p.map(\.key) == ["diary.path"])
        #expect(p.first?.value == "\"/var/lib/venue-beacon/diary.sqlite\"")
        #expect(p.first?.problem.contains("[hub] store") == true)
        // Said once, whatever the value.
        #expect(hubProblems(Self.hubMinimal + "\n[diary]\npath = \"relative\"\n").map(\.key) == ["diary.path"])
    }

    @Test func aHubConfigHasNoNodeSections() {
        for section in ["bluetooth", "herald", "gpio", "schedule", "replication"] {
            let p = hubProblems(Self.hubMinimal + "\n[\(section)]\n")
            #expect(p.map(\.key) == ["[\(section)]"], "\(section)")
            #expect(p.first?.problem.contains("is a node's section") == true, "\(section)")
        }
        let unknown = hubProblems(Self.hubMinimal + "\n[extras]\n")
        #expect(unknown.map(\.key) == ["[extras]"])
        #expect(unknown.first?.problem == "unknown section; a hub's config has sections [venue], [diary], [export], [logging], [hub]")
        let noHub = hubProblems(Self.minimal)
        #expect(noHub.map(\.key) == ["[hub]"])
        let noBroker = hubProblems(Self.minimal + "\n[hub]\n")
        #expect(noBroker.map(\.key) == ["hub.broker"])
        let bad = hubProblems(Self.minimal + "\n[hub]\nbroker = \"mqtts://h\"\nstore = \"hub.sqlite\"\nusername = \"a#\"\n")
        #expect(bad.map(\.key) == ["hub.store", "hub.username", "hub.ca_file"])
    }

    @Test func aNodeConfigHasNoHubSection() {
        let p = problems(Self.hubMinimal)
        #expect(p.map(\.key) == ["[hub]"])
        #expect(p.first?.problem.contains("venue-beacon hub --config PATH") == true)
    }

    @Test func isHubConfigAndLoad() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hub = directory + "/hub.toml"
        let node = directory + "/node.toml"
        try write(Self.hubMinimal + "store = \"\(directory)/hub.sqlite\"\n", to: hub)
        try write(Self.minimal, to: node)
        #expect(HubConfig.isHubConfig(path: hub))
        #expect(!HubConfig.isHubConfig(path: node))
        #expect(!HubConfig.isHubConfig(path: directory + "/missing.toml"))
        #expect(try HubConfig.load(path: hub).hub.store == directory + "/hub.sqlite")
        // The node's checks: a store whose directory is missing, a config others can change.
        try write(Self.hubMinimal + "store = \"/nonexistent/hub.sqlite\"\n", to: hub)
        do {
            _ = try HubConfig.load(path: hub)
            Issue.record("a store in a missing directory was accepted")
        } catch {
            #expect(error.problems.map(\.key) == ["hub.store"])
        }
        #expect(chmod(hub, 0o666) == 0)
        do {
            _ = try HubConfig.load(path: hub)
            Issue.record("a hub config others can change was accepted")
        } catch {
            #expect(error.problems.first?.problem.hasPrefix("refusing a config file others can change") == true)
        }
        do {
            _ = try HubConfig.load(path: directory + "/missing.toml")
            Issue.record("a missing hub config was accepted")
        } catch {
            #expect(error.description.contains("no such file (write one from config/venue-hub.toml"))
        }
    }

    @Test func shippedExamples() throws {
        let hubPath = #filePath.replacingOccurrences(of: "Tests/ApplianceTests/ReplicationSettingsTests.swift", with: "config/venue-hub.toml")
        let hub = try HubConfig.load(path: hubPath)
        #expect(hub.hub.store == HubSettings.defaultStore)
        #expect(hub.hub.username == "hub")
        #expect(hub.diary.recordingDays == 31 && hub.diary.shareDays == 14)
        #expect(HubConfig.isHubConfig(path: hubPath))
        let nodePath = #filePath.replacingOccurrences(of: "Tests/ApplianceTests/ReplicationSettingsTests.swift", with: "config/venue-beacon.toml")
        #expect(!HubConfig.isHubConfig(path: nodePath))
        // The node example's commented-out [replication], uncommented, is valid.
        let text = try String(contentsOfFile: nodePath, encoding: .utf8)
        guard let start = text.range(of: "# [replication]\n") else {
            Issue.record("config/venue-beacon.toml has no commented-out [replication]")
            return
        }
        let block = text[start.lowerBound...].split(separator: "\n").prefix { $0.hasPrefix("#") }
        let keys = block.filter { $0.hasPrefix("# ") && $0.dropFirst(2).contains(" = ") }.map { $0.dropFirst(2) }
        #expect(keys.map { $0.split(separator: " ").first.map(String.init) ?? "" }
            == ["broker", "node", "username", "password_file", "ca_file", "home_assistant"])
        let uncommented = "[replication]\n" + keys.filter { !$0.hasPrefix("ca_file") }.joined(separator: "\n")
        let s = try Settings.parse(Self.minimal + "\n" + uncommented + "\n", file: "example")
        #expect(s.replication?.broker.port == 1883)
    }
}
