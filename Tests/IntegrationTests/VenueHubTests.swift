import Appliance
import Foundation
import GRDB
import Logging
import Synchronization
import Testing
import VenueDiary

/// Several nodes, one venue, with real parts: Debian's mosquitto on loopback with the venue's
/// ACL, the real `venue-beacon hub` and `venue-beacon replicate` processes, real SQLite diaries.
/// Each scenario checks that the hub ends with every visit exactly once, at its latest state.
@Suite(.serialized) struct VenueHubTests {
    static let t0 = 1_795_197_600.0

    /// A venue: a broker, a hub config and store, and nodes with diaries.
    final class Venue: Sendable {
        let dir: TemporaryDirectory
        let broker: Mosquitto
        /// Every hub process started, stopped at the end.
        let hubs = Mutex<[ChildProcess]>([])

        /// A venue with its broker started, for `body`; afterwards (also when it throws) every
        /// process it started is stopped and its files removed.
        static func run(nodes: [String], brokerExtra: String = "", _ body: (Venue) async throws -> Void) async throws {
            let venue = try Venue(nodes: nodes, brokerExtra: brokerExtra)
            do {
                try await venue.broker.start()
                try await body(venue)
            } catch {
                await venue.close()
                throw error
            }
            await venue.close()
        }

        func close() async {
            for hub in hubs.withLock({ $0 }) { await hub.stop() }
            await broker.stop()
            dir.remove()
        }
        var hubConfig: String { dir.path("hub.toml") }
        var hubStore: String { dir.path("hub.sqlite") }

        init(nodes: [String], brokerExtra: String = "") throws {
            dir = try TemporaryDirectory("venue-hub")
            var logins = ["hub": "hub-secret"]
            for node in nodes { logins[node] = "\(node)-secret" }
            broker = try Mosquitto(logins: logins, extra: brokerExtra)
            _ = try dir.write("hub.pass", "hub-secret\n")
            _ = try dir.write("hub.toml", """
                [venue]
                country = 826
                state = 4
                code = 123123
                name = "Riverside School"
                [diary]
                check_out_seconds = 300
                recording_days = 21
                [export]
                directory = "\(dir.path("usb"))"
                require_mount = false
                outbox = "\(dir.path("outbox"))"
                signing_key = "\(dir.path("hub.key"))"
                [hub]
                store = "\(hubStore)"
                broker = "\(broker.url)"
                password_file = "\(dir.path("hub.pass"))"
                """)
        }

        /// A node's config: `name` as the node, logging in as `login` (default: its name).
        func nodeConfig(_ name: String, login: String? = nil, password: String? = nil) throws -> String {
            let login = login ?? name
            let passwordFile = try dir.write("\(name)-as-\(login).pass", (password ?? "\(login)-secret") + "\n")
            return try dir.write("\(name)-as-\(login).toml", """
                [venue]
                country = 826
                state = 4
                code = 123123
                name = "Riverside School"
                [diary]
                path = "\(diary(name))"
                [replication]
                broker = "\(broker.url)"
                node = "\(name)"
                username = "\(login)"
                password_file = "\(passwordFile)"
                """)
        }

        func diary(_ name: String) -> String { dir.path("\(name).sqlite") }

        /// Fills a node's diary with `count` closed visits of distinct phones.
        @discardableResult
        func record(_ name: String, visits count: Int, first: Int = 0) throws -> DiaryStore {
            let store = try DiaryStore(path: diary(name))
            let visits = (first..<first + count).map { index in
                Visit(
                    kind: .herald, payload: Array("\(name)-\(index)".utf8), checkIn: t0 + Double(index),
                    lastSeen: t0 + Double(index) + 600, checkOut: t0 + Double(index) + 600, samples: 5, rssiMax: -50,
                    rssiSum: -260)
            }
            for chunk in stride(from: 0, to: visits.count, by: 5000) {
                try store.save(Array(visits[chunk..<min(chunk + 5000, visits.count)]))
            }
            return store
        }

        func startHub() async throws -> ChildProcess {
            let hub = try ChildProcess(ProcessRunner.venueBeacon.path, ["hub", "--config", hubConfig])
            hubs.withLock { $0.append(hub) }
            try await hub.waitForOutput("hub: subscribed")
            return hub
        }

        func replicate(_ config: String, timeout: Int) throws -> ChildProcess {
            try ChildProcess(ProcessRunner.venueBeacon.path, ["replicate", "--config", config, "--timeout", "\(timeout)"])
        }

        /// (node, node visit id) → version, as the hub holds them.
        func hubRows() throws -> [String: [Int64: Int64]] {
            var config = Configuration()
            config.readonly = true
            let queue = try DatabaseQueue(path: hubStore, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in
                var rows: [String: [Int64: Int64]] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT node, visit, version FROM node_visit") {
                    rows[row[0], default: [:]][row[1]] = row[2]
                }
                return rows
            }
        }

        /// Every visit of the node's diary at the hub, at the change the node has now.
        func expectComplete(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let store = try DiaryStore(path: diary(name), readOnly: true)
            var expected: [Int64: Int64] = [:]
            var after: Int64 = 0
            while true {
                let changes = try store.changes(after: after, limit: 5000)
                guard let last = changes.last else { break }
                for (change, visit) in changes { expected[visit.id!] = change }
                after = last.change
            }
            let held = try hubRows()[name] ?? [:]
            #expect(held.count == expected.count, "node \(name): hub holds \(held.count) of \(expected.count)", sourceLocation: sourceLocation)
            #expect(held == expected, "node \(name): versions differ", sourceLocation: sourceLocation)
        }
    }

    @Test func theHubAwayAtFirstThenEverythingArrivesOnceFromThreeNodes() async throws {
        let nodes = ["hall", "room-2", "kitchen"]
        try await Venue.run(nodes: nodes) { venue in
            for (index, node) in nodes.enumerated() { try venue.record(node, visits: 300 + 100 * index) }
            let configs = try nodes.map { try venue.nodeConfig($0) }

            // No hub has ever subscribed: the broker takes the visits and nobody will read them.
            let early = try venue.replicate(configs[0], timeout: 6)
            #expect(try await early.waitForExit() == 75, "\(early.output)")
            #expect(early.output.contains("no hub has subscribed"), "\(early.output)")

            // The hub subscribed once, and is away now: its session queues at the broker.
            let first = try await venue.startHub()
            await first.stop()
            let away = try venue.replicate(configs[1], timeout: 6)
            #expect(try await away.waitForExit() == 75, "\(away.output)")
            #expect(away.output.contains("did not acknowledge"), "\(away.output)")
            #expect(away.output.contains("pending 400"), "\(away.output)")

            let hub = try await venue.startHub()
            let passes = try configs.map { try venue.replicate($0, timeout: 60) }
            for pass in passes {
                #expect(try await pass.waitForExit(timeout: .seconds(90)) == 0, "\(pass.output)")
                #expect(pass.output.contains("pending 0"), "\(pass.output)")
            }
            for node in nodes { try venue.expectComplete(node) }

            // Again: nothing is pending, nothing is sent, nothing changes.
            let again = try venue.replicate(configs[2], timeout: 10)
            #expect(try await again.waitForExit() == 0)
            #expect(again.output.contains("sent 0, acknowledged 0, pending 0"), "\(again.output)")
            #expect(try venue.hubRows().values.map(\.count).sorted() == [300, 400, 500])
        }
    }

    @Test func aNodeUnderAnotherNodesNameGetsNothingIntoTheHub() async throws {
        try await Venue.run(nodes: ["hall", "room-2"]) { venue in
            let hub = try await venue.startHub()
            try venue.record("room-2", visits: 20)
            let impostor = try venue.replicate(try venue.nodeConfig("room-2", login: "hall"), timeout: 10)
            #expect(try await impostor.waitForExit() == 77, "\(impostor.output)")
            #expect(impostor.output.contains("refused the visits of node 'room-2' from login 'hall'"), "\(impostor.output)")
            let wrongPassword = try venue.replicate(try venue.nodeConfig("room-2", password: "guess"), timeout: 10)
            #expect(try await wrongPassword.waitForExit() == 78, "\(wrongPassword.output)")
            #expect(wrongPassword.output.contains("refused the login 'room-2'"), "\(wrongPassword.output)")
            #expect(try venue.hubRows().isEmpty)
            // Under its own login the same node gets in.
            let honest = try venue.replicate(try venue.nodeConfig("room-2"), timeout: 30)
            #expect(try await honest.waitForExit() == 0, "\(honest.output)")
            try venue.expectComplete("room-2")
        }
    }

    @Test func aBrokerThatDropsAndABrokerKilledLoseNothing() async throws {
        // The broker keeps at most 10 messages for the hub while it is away, and drops the rest.
        try await Venue.run(nodes: ["hall", "room-2"], brokerExtra: "max_queued_messages 10") { venue in
            let first = try await venue.startHub()
            await first.stop()
            try venue.record("hall", visits: 3000)
            try venue.record("room-2", visits: 3000)
            let configs = try ["hall", "room-2"].map { try venue.nodeConfig($0) }
            // Passes while the hub is away, until the broker has had more than it keeps (each
            // pass sends its window, and again after 10 s without progress): the drop is waited
            // for, not assumed from a duration.
            for _ in 0..<6 where !venue.broker.output.contains("Outgoing messages are being dropped") {
                let away = try configs.map { try venue.replicate($0, timeout: 14) }
                for pass in away {
                    #expect(try await pass.waitForExit(timeout: .seconds(90)) == 75, "\(pass.output)")
                }
            }
            #expect(venue.broker.output.contains("Outgoing messages are being dropped"), "\(venue.broker.output)")
            // The hub returns to a full queue with gaps; the broker then dies without saving.
            let hub = try await venue.startHub()
            let passes = try configs.map { try venue.replicate($0, timeout: 120) }
            // Mid-drain: once the hub holds some of it.
            try await waitUntil("the hub taking the first visits") { Self.held(venue) > 0 }
            try await venue.broker.kill9()
            try await venue.broker.start()
            for pass in passes {
                #expect(try await pass.waitForExit(timeout: .seconds(180)) == 0, "\(pass.output)")
            }
            await hub.stop()
            try venue.expectComplete("hall")
            try venue.expectComplete("room-2")
        }
    }

    @Test func newerStatesReplaceOlderOnesAndAResentOldStateChangesNothing() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            let hub = try await venue.startHub()
            let store = try venue.record("hall", visits: 50)
            let config = try venue.nodeConfig("hall")
            #expect(try await venue.replicate(config, timeout: 30).waitForExit() == 0)
            // The node corrects ten visits (longer stays): each gets a newer change.
            var changed = try store.visits().prefix(10).map { $0 }
            for index in changed.indices { changed[index].samples += 10 }
            try store.save(changed)
            #expect(try await venue.replicate(config, timeout: 30).waitForExit() == 0)
            try venue.expectComplete("hall")
            // The diary's acknowledgement is kept: the next pass sends nothing.
            #expect(try DiaryStore(path: venue.diary("hall")).replicationAck()?.acked == (try store.lastChange()))
        }
    }

    @Test func theVenueExportMergesOnePhoneAcrossRoomsAndTheHubSaysWhoIsThere() async throws {
        try await Venue.run(nodes: ["hall", "room-2"]) { venue in
            let hub = try await venue.startHub()
            let phone = Array("phone-1".utf8)
            // The phone is in the hall, then 120 s later (within check_out_seconds) in room 2.
            try DiaryStore(path: venue.diary("hall")).save([
                Visit(kind: .herald, payload: phone, checkIn: Self.t0, lastSeen: Self.t0 + 1200, checkOut: Self.t0 + 1200, samples: 10, rssiMax: -50, rssiSum: -600)
            ])
            try DiaryStore(path: venue.diary("room-2")).save([
                Visit(kind: .herald, payload: phone, checkIn: Self.t0 + 1320, lastSeen: Self.t0 + 2400, checkOut: Self.t0 + 2400, samples: 30, rssiMax: -40, rssiSum: -1500),
                Visit(kind: .herald, payload: Array("phone-2".utf8), checkIn: Self.t0 + 60, lastSeen: Self.t0 + 900, checkOut: Self.t0 + 900, samples: 5, rssiMax: -70, rssiSum: -360),
            ])
            for node in ["hall", "room-2"] {
                let pass = try venue.replicate(try venue.nodeConfig(node), timeout: 30)
                #expect(try await pass.waitForExit() == 0, "\(pass.output)")
            }
            let export = try ProcessRunner.venueBeacon(["export", "--config", venue.hubConfig, "--days", "all", "--now", "2026-11-30T00:00:00Z"])
            #expect(export.status == 0, "\(export.output)")
            let lines = export.stdout.split(whereSeparator: \.isNewline).map(String.init)
            #expect(lines.first?.hasSuffix(",clock_uncorrected,shared_identifier,rooms") == true, "\(export.stdout)")
            #expect(lines.count == 3, "\(export.stdout)")
            let merged = try #require(lines.first { $0.contains("70686f6e652d31") })
            // 40 minutes in two rooms, 40 samples, mean (-600 - 1500) / 40.
            #expect(merged.hasSuffix(",2400,40,-40,-52.5,0,0,hall;room-2"), "\(merged)")
            #expect(lines.contains { $0.contains("70686f6e652d32") && $0.hasSuffix(",room-2") })

            // Delivered as a node delivers: the CSV with its signature to the USB stick.
            try FileManager.default.createDirectory(atPath: venue.dir.path("usb"), withIntermediateDirectories: true)
            let deliver = try ProcessRunner.venueBeacon(
                ["export", "--config", venue.hubConfig, "--days", "all", "--now", "2026-11-30T00:00:00Z", "--deliver", "directory"])
            #expect(deliver.status == 0, "\(deliver.output)")
            let delivered = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("usb"))
            let csv = try #require(delivered.first { $0.hasSuffix(".csv") })
            #expect(delivered.contains(csv + ".minisig"), "\(delivered)")
            let text = try String(contentsOfFile: venue.dir.path("usb/" + csv), encoding: .utf8)
            #expect(text.contains(",hall;room-2\r\n"), "\(text)")

            let status = try ProcessRunner.venueBeacon(["hub", "status", "--config", venue.hubConfig])
            #expect(status.status == 0, "\(status.output)")
            #expect(status.stdout.contains("hall: ") && status.stdout.contains("1 visits"), "\(status.stdout)")
            #expect(status.stdout.contains("room-2: ") && status.stdout.contains("2 visits"), "\(status.stdout)")
        }
    }

    /// The number of visits the hub holds, read while it runs.
    static func held(_ venue: Venue) -> Int {
        ((try? venue.hubRows()) ?? [:]).values.reduce(0) { $0 + $1.count }
    }

    @Test func aNodeKilledMidPassAndAHubKilledMidCommitLoseNothingAndDuplicateNothing() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            try venue.record("hall", visits: 20_000)
            let config = try venue.nodeConfig("hall")
            var hub = try await venue.startHub()
            // The node dies between its publishes and the hub's acknowledgements.
            let doomed = try venue.replicate(config, timeout: 120)
            try await waitUntil { Self.held(venue) > 0 }
            kill(doomed.processIdentifier, SIGKILL)
            _ = try await doomed.waitForExit()
            let afterNode = Self.held(venue)
            #expect(afterNode < 20_000, "the pass finished before it was killed: nothing was tested")
            // The hub dies between its commits and its acknowledgements.
            let second = try venue.replicate(config, timeout: 120)
            try await waitUntil { Self.held(venue) > afterNode }
            kill(hub.processIdentifier, SIGKILL)
            _ = try await hub.waitForExit()
            hub = try await venue.startHub()
            #expect(try await second.waitForExit(timeout: .seconds(150)) == 0, "\(second.output)")
            await hub.stop()
            try venue.expectComplete("hall")
        }
    }

    @Test func aWeeksBacklogDrainsWithoutTheBrokerDropping() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            let first = try await venue.startHub()
            await first.stop()
            // A week of a busy room, recorded while the hub was away.
            try venue.record("hall", visits: 30_000)
            let hub = try await venue.startHub()
            let pass = try venue.replicate(try venue.nodeConfig("hall"), timeout: 170)
            #expect(try await pass.waitForExit(timeout: .seconds(200)) == 0, "\(pass.output)")
            try venue.expectComplete("hall")
            #expect(!venue.broker.output.contains("dropped"), "\(venue.broker.output)")
        }
    }

    @Test func theHubKeepsOnlyRecordingDaysWhateverTheNodesSend() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            let hub = try await venue.startHub()
            let now = Date().timeIntervalSince1970
            // The node keeps 60 days; the hub (recording_days = 21) keeps 21.
            try DiaryStore(path: venue.diary("hall")).save([30, 10, 1].enumerated().map { index, daysAgo in
                let checkOut = now - Double(daysAgo) * 86_400
                return Visit(
                    kind: .herald, payload: Array("phone-\(index)".utf8), checkIn: checkOut - 600, lastSeen: checkOut,
                    checkOut: checkOut, samples: 3, rssiMax: -60, rssiSum: -180)
            })
            let pass = try venue.replicate(try venue.nodeConfig("hall"), timeout: 30)
            #expect(try await pass.waitForExit() == 0, "\(pass.output)")
            #expect(pass.output.contains("acknowledged 3, pending 0"), "\(pass.output)")
            let held = try venue.hubRows()["hall"] ?? [:]
            #expect(held.keys.sorted() == [2, 3])
        }
    }

    /// The service's path: the worker `venue-beacon run` starts once its diary is open, with
    /// visits written while it runs, its status online and, after it stops, offline.
    @Test func theServicesWorkerReplicatesAsTheDiaryGrowsAndSaysWhenItLeaves() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            let hub = try await venue.startHub()
            let settings = try Settings.load(path: try venue.nodeConfig("hall"))
            let store = try venue.record("hall", visits: 100)
            let worker = ReplicationWorker(
                settings: try #require(settings.replication), venue: settings.venue, diaryPath: venue.diary("hall"), clockSynchronised: { true },
                logger: Logger(label: "test"))
            worker.start()
            try await waitUntil { Self.held(venue) == 100 }
            // Visits closed while it runs follow within moments.
            try venue.record("hall", visits: 50, first: 100)
            try await waitUntil { Self.held(venue) == 150 }
            let status = try ProcessRunner.venueBeacon(["hub", "status", "--config", venue.hubConfig])
            #expect(status.stdout.contains("hall: online, clock synchronised"), "\(status.stdout)")
            worker.stop()
            try await waitUntil {
                (try? ProcessRunner.venueBeacon(["hub", "status", "--config", venue.hubConfig]))?.stdout.contains("hall: offline") == true
            }
            try venue.expectComplete("hall")
            #expect(try store.replicationAck()?.acked == (try store.lastChange()))
        }
    }

    /// The broker files an installer drops into /etc/mosquitto, checked against the real broker
    /// by their own script (a node publishes only under its own name; the hub reads only that).
    @Test func theShippedBrokerConfigHoldsEachLoginToItsOwnTopics() throws {
        let check = ProcessRunner.repositoryRoot.appendingPathComponent("config/mosquitto/check")
        let result = try ProcessRunner.run(check, [], timeout: .seconds(90))
        #expect(result.status == 0, "\(result.output)")
    }

    /// `[export] schedule` on the hub: a time missed while the hub was off runs once, on a
    /// synchronised clock only, to every configured target; then not again until the next.
    @Test func theHubRunsTheVenuesScheduledExportOnce() async throws {
        try await Venue.run(nodes: ["hall"]) { venue in
            let first = try await venue.startHub()
            await first.stop()
            let text = try String(contentsOfFile: venue.hubConfig, encoding: .utf8)
                .replacingOccurrences(of: "[export]\n", with: "[export]\nschedule = \"daily 03:30\"\n")
            let config = try HubConfig.parse(text, file: venue.hubConfig)
            try FileManager.default.createDirectory(atPath: venue.dir.path("usb"), withIntermediateDirectories: true)
            // The last one done two days ago: yesterday's 03:30 (at least) was missed.
            let lastDone = Date().timeIntervalSince1970 - 2 * 86_400
            _ = try venue.dir.write("hub-scheduled-export.state", "\(Int(lastDone)) last scheduled export\n")
            let log = Mutex<[String]>([])
            let housekeeping = HubHousekeeping(config: config) { line in log.withLock { $0.append(line) } }
            await housekeeping.pass(now: Date(), synchronised: false)
            #expect(try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("usb")).isEmpty)
            await housekeeping.pass(now: Date(), synchronised: true)
            let delivered = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("usb"))
            #expect(delivered.filter { $0.hasSuffix(".csv") }.count == 1, "\(delivered) \(log.withLock { $0 })")
            let state = try String(contentsOfFile: venue.dir.path("hub-scheduled-export.state"), encoding: .utf8)
            #expect(Double(state.split(separator: " ").first ?? "") ?? 0 > lastDone, "\(state)")
            await housekeeping.pass(now: Date(), synchronised: true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("usb")).count == delivered.count)
        }
    }
}
