import BLEHost
import BLETransport
import Foundation
import Testing
import VenueNode
@testable import Appliance

/// `venue-beacon doctor`: each check from recorded sysfs texts and command outputs.
@Suite struct DoctorTests {
    // MARK: rfkill

    /// A Raspberry Pi OS Pi 4 before the Wi-Fi country is set: /sys/class/rfkill as it reads.
    static let piBlocked: [(id: String, name: String, type: String, soft: String, hard: String)] = [
        ("rfkill0", "phy0\n", "wlan\n", "1\n", "0\n"),
        ("rfkill1", "hci0\n", "bluetooth\n", "1\n", "0\n"),
    ]

    func switches(_ rows: [(id: String, name: String, type: String, soft: String, hard: String)]) -> [RfkillSwitch] {
        rows.compactMap { RfkillSwitch.parse(id: $0.id, name: $0.name, type: $0.type, soft: $0.soft, hard: $0.hard) }
    }

    @Test func rfkillSoftBlockIsNamedWithItsFix() {
        let line = BluetoothChecks.rfkill(switches(Self.piBlocked))
        #expect(line.verdict == .problem)
        #expect(line.found == "Bluetooth soft-blocked: hci0 (rfkill1)")
        #expect(line.fix?.contains("rfkill unblock bluetooth") == true)
        #expect(line.fix?.contains("Wi-Fi country") == true)
    }

    @Test func rfkillHardBlockAndUnblocked() {
        let hard = BluetoothChecks.rfkill(switches([("rfkill1", "hci0", "bluetooth", "0", "1")]))
        #expect(hard.verdict == .problem)
        #expect(hard.fix?.contains("disable-bt") == true)
        // Only the Wi-Fi blocked: Bluetooth is fine.
        let fine = BluetoothChecks.rfkill(switches([("rfkill0", "phy0", "wlan", "1", "0"), ("rfkill1", "hci0", "bluetooth", "0", "0")]))
        #expect(fine.verdict == .ok)
        #expect(BluetoothChecks.rfkill([]).verdict == .unchecked)
    }

    @Test func rfkillParsingRefusesWhatIsNotAFlag() {
        #expect(RfkillSwitch.parse(id: "rfkill0", name: nil, type: "bluetooth\n", soft: "2\n", hard: "0") == nil)
        #expect(RfkillSwitch.parse(id: "rfkill0", name: nil, type: nil, soft: "0", hard: "0") == nil)
        #expect(RfkillSwitch.parse(id: "rfkill0", name: nil, type: "bluetooth", soft: "0", hard: "1")
            == RfkillSwitch(id: "rfkill0", name: "rfkill0", type: "bluetooth", soft: false, hard: true))
    }

    @Test func rfkillIsReadFromASysfsTree() throws {
        let sys = TemporaryDirectory("rfkill")
        for row in Self.piBlocked {
            try FileManager.default.createDirectory(atPath: sys.file(row.id), withIntermediateDirectories: true)
            for (file, text) in [("name", row.name), ("type", row.type), ("soft", row.soft), ("hard", row.hard)] {
                try text.write(toFile: sys.file("\(row.id)/\(file)"), atomically: false, encoding: .utf8)
            }
        }
        #expect(Doctor.rfkillSwitches(root: sys.path) == switches(Self.piBlocked))
    }

    // MARK: the controller

    static let address = BluetoothAddress("B8:27:EB:12:34:56")!

    @Test func theControllerByIndexOrAddress() {
        let adapters: [BluetoothAdapterInfo] = [BluetoothAdapterInfo(index: 0, address: Self.address, isUp: true)]
        let byIndex = BluetoothChecks.controller(device: "hci0", adapters: .success(adapters), socketExists: { _ in false })
        #expect(byIndex.verdict == .ok)
        #expect(byIndex.found.hasPrefix("hci0 B8:27:EB:12:34:56, powered"))
        let byAddress = BluetoothChecks.controller(device: "B8:27:EB:12:34:56", adapters: .success(adapters), socketExists: { _ in false })
        #expect(byAddress.verdict == .ok)
        // Renamed: hci1 configured, only hci0 there.
        let missing = BluetoothChecks.controller(device: "hci1", adapters: .success(adapters), socketExists: { _ in false })
        #expect(missing.verdict == .problem)
        #expect(missing.found == "hci1 not found (adapters present: hci0 B8:27:EB:12:34:56 (up))")
        let none = BluetoothChecks.controller(device: "hci0", adapters: .success([]), socketExists: { _ in false })
        #expect(none.found == "hci0 not found (no adapter at all)")
        #expect(none.fix?.contains("hciuart") == true)
        let unsupported = BluetoothChecks.controller(device: "hci0", adapters: .failure(.bluetoothUnsupported), socketExists: { _ in false })
        #expect(unsupported.verdict == .problem)
        #expect(BluetoothChecks.controller(device: "unix:/tmp/x", adapters: .success([]), socketExists: { $0 == "/tmp/x" }).verdict == .ok)
    }

    @Test func bluetoothdBesideTheServiceIsNoFault() {
        #expect(BluetoothChecks.bluetoothdRunning(comms: ["systemd\n", "bluetoothd\n"]))
        #expect(!BluetoothChecks.bluetoothdRunning(comms: ["systemd\n", "bluetoothd-helper\n"]))
        #expect(BluetoothChecks.bluetoothd(running: true).verdict == .ok)
        #expect(BluetoothChecks.bluetoothd(running: nil).verdict == .unchecked)
    }

    // MARK: GPIO

    var gpio: GPIOSettings {
        GPIOSettings(enabled: true, chip: "gpiochip0", statusLED: .name("GPIO17"), activityLED: nil, exportLED: nil, button: nil, activeLow: false)
    }

    @Test func gpioChipAccessByTheServiceGroups() {
        let good = SystemChecks.ChipDevice(path: "/dev/gpiochip0", mode: 0o660, uid: 0, group: "gpio")
        #expect(SystemChecks.gpio(settings: gpio, gpioGroupExists: true, chip: good).verdict == .ok)
        // The udev rule not applied: root's alone.
        let rootOnly = SystemChecks.ChipDevice(path: "/dev/gpiochip0", mode: 0o600, uid: 0, group: "root")
        let line = SystemChecks.gpio(settings: gpio, gpioGroupExists: true, chip: rootOnly)
        #expect(line.verdict == .problem)
        #expect(line.found.contains("group root, mode 0600"))
        #expect(line.fix?.contains("udevadm trigger") == true)
        // The GPIO group removed: named.
        let noGroup = SystemChecks.gpio(settings: gpio, gpioGroupExists: false, chip: good)
        #expect(noGroup.verdict == .problem)
        #expect(noGroup.found.contains("group gpio does not exist"))
        #expect(SystemChecks.gpio(settings: gpio, gpioGroupExists: true, chip: nil).verdict == .problem)
        var off = gpio
        off.enabled = false
        #expect(SystemChecks.gpio(settings: off, gpioGroupExists: false, chip: nil).verdict == .unchecked)
    }

    @Test func gpioChipByNamePathOrLabel() {
        #expect(SystemChecks.chipPath("gpiochip4", labels: [:]) == "/dev/gpiochip4")
        #expect(SystemChecks.chipPath("/dev/gpiochip0", labels: [:]) == "/dev/gpiochip0")
        #expect(SystemChecks.chipPath("pinctrl-rp1", labels: ["gpiochip0": "gpio-brcmstb@107d508500", "gpiochip4": "pinctrl-rp1"]) == "/dev/gpiochip4")
    }

    // MARK: the clock

    static let timedatectlSynced = """
        Timezone=Europe/London
        LocalRTC=no
        CanNTP=yes
        NTP=yes
        NTPSynchronized=yes
        TimeUSec=Fri 2026-11-27 16:50:01 GMT
        RTCTimeUSec=n/a

        """
    static let timesync = """
        LinkNTPServers=
        SystemNTPServers=
        FallbackNTPServers=0.debian.pool.ntp.org 1.debian.pool.ntp.org 2.debian.pool.ntp.org 3.debian.pool.ntp.org
        ServerName=0.debian.pool.ntp.org
        ServerAddress=162.159.200.1
        RootDistanceMaxUSec=5s
        PollIntervalMinUSec=32s
        PollIntervalMaxUSec=34min 8s
        PollIntervalUSec=2min 8s
        NTPMessage={ Leap=0, Version=4, Mode=4, Stratum=3, Precision=-25, RootDelay=10.147ms, RootDispersion=1.022ms, Reference=A29FC801 }
        Frequency=-1402531

        """

    @Test func clockSynchronisedWithSinceAndSource() {
        let since = Date(timeIntervalSince1970: 1_800_000_000)
        let line = SystemChecks.clock(show: Self.timedatectlSynced, timesync: Self.timesync, flagSince: since)
        #expect(line.verdict == .ok)
        #expect(line.found == "synchronised since 2027-01-15 08:00:00 UTC, source 0.debian.pool.ntp.org (162.159.200.1)")
        // The flag alone (timedatectl missing) counts, as the service counts it.
        #expect(SystemChecks.clock(show: nil, timesync: nil, flagSince: since).verdict == .ok)
    }

    @Test func clockNotSynchronised() {
        let unsynced = Self.timedatectlSynced.replacingOccurrences(of: "NTPSynchronized=yes", with: "NTPSynchronized=no")
        let line = SystemChecks.clock(show: unsynced, timesync: Self.timesync, flagSince: nil)
        #expect(line.verdict == .problem)
        #expect(line.found.contains("trying source 0.debian.pool.ntp.org"))
        #expect(line.fix?.contains("Wi-Fi") == true)
        let off = unsynced.replacingOccurrences(of: "NTP=yes", with: "NTP=no")
        #expect(SystemChecks.clock(show: off, timesync: nil, flagSince: nil).fix == "sudo timedatectl set-ntp true")
        #expect(SystemChecks.clock(show: nil, timesync: nil, flagSince: nil).verdict == .problem)
        #expect(SystemChecks.properties("A=1\nB=x=y\nnoequals\n") == ["A": "1", "B": "x=y"])
    }

    // MARK: the diary

    func diary(bytes: Int64, free: Int64?, days: Double?, problem: String? = nil) -> ServiceChecks.DiaryFacts {
        ServiceChecks.DiaryFacts(path: "/var/lib/venue-beacon/diary.sqlite", directoryProblem: problem, fileBytes: bytes, freeBytes: free, daysOfData: days, visits: 10)
    }

    @Test func diarySpaceForRecordingDaysAtTheMeasuredRate() {
        // 10 MB over 10 days: 1 MB a day; 31 days need 21 MB more.
        let enough = ServiceChecks.diary(diary(bytes: 10_000_000, free: 30_000_000, days: 10), recordingDays: 31)
        #expect(enough.verdict == .ok)
        #expect(enough.found.contains("1.0 MB a day over 10 days"))
        #expect(enough.found.contains("needs about 21.0 MB more"))
        let short = ServiceChecks.diary(diary(bytes: 10_000_000, free: 20_000_000, days: 10), recordingDays: 31)
        #expect(short.verdict == .problem)
        #expect(short.fix?.contains("recording_days") == true)
        let young = ServiceChecks.diary(diary(bytes: 100_000, free: 1_000, days: 0.5), recordingDays: 31)
        #expect(young.verdict == .ok)
        #expect(young.found.contains("not measured yet"))
        #expect(ServiceChecks.diary(diary(bytes: 0, free: 1, days: nil, problem: "its directory /x does not exist"), recordingDays: 31).verdict == .problem)
        #expect(ServiceChecks.diary(diary(bytes: 10_000_000, free: 5_000_000, days: 10), recordingDays: nil).found.contains("about 5 more days"))
    }

    // MARK: delivery

    func export(email: String, recipients: Bool) throws -> ExportSettings {
        let key = AgeRecipient(publicKey: Array(repeating: 9, count: 32)).description
        let keys = recipients ? "recipients = [\"\(key)\"]\n" : ""
        return try Settings.parse(SettingsTests.minimal + "\n[export]\nemail = \"\(email)\"\n" + keys, file: "t.toml").export
    }

    @Test func recipientsNeverSetIsAProblem() throws {
        let lines = ServiceChecks.email(try export(email: "", recipients: false), sendmailProblem: nil, usesMsmtp: true, account: nil)
        #expect(lines.count == 1)
        #expect(lines.first?.verdict == .problem)
        #expect(lines.first?.found.contains("export.email is empty") == true)
    }

    @Test func emailSendmailAndTheAccountTheServiceReads() throws {
        let settings = try export(email: "tracers@example.org", recipients: true)
        let readable = ServiceChecks.AccountFile(path: "/etc/msmtprc", mode: 0o640, ownerIsService: false, group: "venue-beacon")
        let lines = ServiceChecks.email(settings, sendmailProblem: nil, usesMsmtp: true, account: readable)
        #expect(lines.map(\.verdict) == [.ok, .ok, .ok])
        // Counted, not named: the list goes on the card.
        #expect(lines.first?.found == "to 1 address, sealed to 1 age recipient")
        #expect(!lines.contains { $0.found.contains("tracers@example.org") })
        // root's alone, as msmtp's package leaves it: the service cannot read it.
        let rootOnly = ServiceChecks.AccountFile(path: "/etc/msmtprc", mode: 0o600, ownerIsService: false, group: "root")
        let refused = ServiceChecks.email(settings, sendmailProblem: "/usr/sbin/sendmail does not exist", usesMsmtp: true, account: rootOnly)
        #expect(refused.map(\.verdict) == [.ok, .problem, .problem])
        #expect(refused.last?.fix == "sudo chgrp venue-beacon /etc/msmtprc; sudo chmod 640 /etc/msmtprc")
        #expect(ServiceChecks.email(settings, sendmailProblem: nil, usesMsmtp: true, account: nil).last?.verdict == .problem)
        let open = ServiceChecks.AccountFile(path: "/etc/msmtprc", mode: 0o644, ownerIsService: false, group: "root")
        #expect(ServiceChecks.email(settings, sendmailProblem: nil, usesMsmtp: true, account: open).last?.found.contains("every user") == true)
        // Unsealed without plaintext = true: refused as the export would be.
        let plain = ServiceChecks.email(try export(email: "tracers@example.org", recipients: false), sendmailProblem: nil, usesMsmtp: false, account: nil)
        #expect(plain.first?.verdict == .problem)
        #expect(plain.last?.verdict == .unchecked)
    }

    // MARK: outbox, hours, hub, card

    @Test func outboxWaitingAndOldest() {
        #expect(ServiceChecks.outbox([]).verdict == .ok)
        let entry = OutboxEntry(
            id: "20270115T080000Z-1234", messageID: "<m@x>", attempts: 3, nextAttempt: Date(), lastError: "msmtp: cannot connect", earliestVisitEnd: nil)
        let line = ServiceChecks.outbox([entry])
        #expect(line.verdict == .problem)
        #expect(line.found.hasPrefix("1 email waiting"))
        #expect(line.found.contains("msmtp: cannot connect"))
        #expect(ServiceChecks.outbox(nil, error: "permission denied").verdict == .unchecked)
    }

    @Test func openingHoursOpenOrClosedNow() throws {
        let utc = TimeZone(identifier: "UTC")!
        let nineToFive = Schedule(days: Array(repeating: [OpeningRange(start: 9 * 60, end: 17 * 60)], count: 7), timeZone: utc)
        let noon = Date(timeIntervalSince1970: 1_800_000_000 + 4 * 3600)  // 12:00 UTC
        #expect(ServiceChecks.hours(nineToFive, now: noon).found.hasPrefix("open now until"))
        #expect(ServiceChecks.hours(nineToFive, now: noon + 8 * 3600).found.hasPrefix("closed now"))
        #expect(ServiceChecks.hours(nil, now: noon).verdict == .ok)
        #expect(ServiceChecks.hours(Schedule(days: Array(repeating: [], count: 7), timeZone: utc), now: noon).verdict == .problem)
    }

    @Test func hubConfiguredReachableOrNot() throws {
        #expect(ServiceChecks.hub(nil, unreachable: nil, backlog: nil, acknowledgedAt: nil).verdict == .unchecked)
        let settings = try Settings.parse(
            SettingsTests.minimal + "\n[replication]\nbroker = \"mqtt://hub.local:1883\"\nnode = \"bar\"\n", file: "t.toml").replication
        let away = ServiceChecks.hub(settings, unreachable: "Connection refused", backlog: 12, acknowledgedAt: nil)
        #expect(away.verdict == .problem)
        #expect(away.found.contains("12 visits not yet acknowledged"))
        #expect(ServiceChecks.hub(settings, unreachable: nil, backlog: 0, acknowledgedAt: 1_800_000_000).verdict == .ok)
        // A closed local port is refused at once.
        #expect(TCPProbe.unreachable(host: "127.0.0.1", port: 1, timeout: 2) != nil)
    }

    @Test func theCardsImportState() {
        #expect(ServiceChecks.card(directory: "/boot/firmware", refused: true, pending: true).verdict == .problem)
        #expect(ServiceChecks.card(directory: "/boot/firmware", refused: false, pending: true).verdict == .unchecked)
        #expect(ServiceChecks.card(directory: "/boot/firmware", refused: false, pending: false).verdict == .ok)
    }

    @Test func theStatusFileIsRefreshedByTheTimer() {
        let active = ServiceChecks.statusFile(directory: "/boot/firmware", exists: true, timer: "active")
        #expect(active.verdict == .ok)
        #expect(active.found == "/boot/firmware/venue-beacon-status.txt: written at each start, refreshed by venue-beacon-status.timer every 5 minutes")
        let off = ServiceChecks.statusFile(directory: "/boot/firmware", exists: true, timer: "inactive")
        #expect(off.verdict == .problem)
        #expect(off.found.contains("venue-beacon-status.timer is inactive"))
        #expect(off.fix == "sudo systemctl enable --now venue-beacon-status.timer")
        #expect(ServiceChecks.statusFile(directory: "/boot/firmware", exists: true, timer: nil).verdict == .unchecked)
        #expect(ServiceChecks.statusFile(directory: "/boot", exists: false, timer: "active").verdict == .unchecked)
        #expect(ServiceChecks.statusFile(directory: "/boot", exists: true, isFAT: false, timer: "active").found.contains("not a FAT boot partition"))
    }

    /// The config named once on its line, however many problems it has.
    @Test func theConfigLineNamesTheFileOnce() async throws {
        let dir = TemporaryDirectory("doctor-config")
        let path = dir.file("venue-beacon.toml")
        try "[venue]\ncountry = 70000\n[diary]\ncheck_in_seconds = -1\n".write(toFile: path, atomically: true, encoding: .utf8)
        let report = await Doctor(configPath: path, bootDirectory: dir.path).run()
        let line = try #require(report.lines.first)
        #expect(line.check == "config")
        #expect(line.verdict == .problem)
        #expect(line.found.hasPrefix(path + ": "))
        #expect(line.found.components(separatedBy: path).count == 2, "\(line.found)")
        #expect(line.found.contains("venue.country = 70000: "))
        #expect(line.found.contains("; diary.check_in_seconds = -1: "))
        let other = ConfigProblem(file: "/other.toml", key: "a", value: nil, problem: "b")
        #expect(ServiceChecks.configProblems("/c.toml", [ConfigProblem(file: "/c.toml", key: nil, value: nil, problem: "x"), other]) == "/c.toml: x; /other.toml: a: b")
    }

    // MARK: the report

    @Test func reportTextJSONAndExit() {
        let report = DoctorReport([
            .ok("clock", "synchronised"), .problem("rfkill", "Bluetooth soft-blocked: hci0 (rfkill1)", fix: "sudo rfkill unblock bluetooth"),
            .unchecked("LE states", "not asked"),
        ])
        #expect(!report.passed)
        #expect(report.text == """
            ✓ clock: synchronised
            ✗ rfkill: Bluetooth soft-blocked: hci0 (rfkill1)
                fix: sudo rfkill unblock bluetooth
            – LE states: not asked
            1 problem found

            """)
        let json = try? JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any]
        #expect(json?["passed"] as? Bool == false)
        #expect((json?["checks"] as? [[String: Any]])?.count == 3)
        #expect(DoctorReport([.ok("clock", "x"), .unchecked("hub", "y")]).passed)
    }

    @Test func theTestEmailCarriesNoVisitData() throws {
        let settings = try Settings.parse(
            SettingsTests.minimal + "\n[export]\nemail = \"tracers@example.org\"\nfrom = \"node@venue.example\"\nplaintext = true\n", file: "t.toml")
        let message = TestEmail.message(settings: settings, date: Date(timeIntervalSince1970: 1_800_000_000), hostName: "pi")
        let parsed = ParsedMessage(message)
        #expect(parsed.header("To") == "tracers@example.org")
        #expect(parsed.header("Subject") == "venue-beacon test email from Erin's Stakehouse (123123)")
        #expect(parsed.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(!message.contains("attachment"))
        // Handed to a sendmail that keeps what it read.
        let dir = TemporaryDirectory("sendmail")
        let sendmail = dir.script("sendmail", "cat > \(dir.file("got.eml"))")
        var withProgram = settings
        withProgram.export.sendmail = sendmail
        #expect(TestEmail.send(settings: withProgram, temporaryDirectory: dir.path) == nil)
        let got = ParsedMessage((try? String(contentsOfFile: dir.file("got.eml"), encoding: .utf8)) ?? "")
        #expect(got.decodedBody.map { String(decoding: $0, as: UTF8.self) }?.contains("It carries no visit data.") == true)
        withProgram.export.sendmail = dir.script("failing", "cat >/dev/null; echo 'no route' >&2; exit 69")
        #expect(TestEmail.send(settings: withProgram, temporaryDirectory: dir.path)?.contains("status 69") == true)
    }
}
