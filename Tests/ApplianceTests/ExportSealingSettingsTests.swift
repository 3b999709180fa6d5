import Foundation
import Testing
@testable import Appliance

/// `[export] recipients`, `plaintext`, `schedule`, `signing_key`: parsed, validated, and every
/// mistake named with its key and what is allowed.
@Suite struct ExportSealingSettingsTests {
    static let recipient = AgeRecipient(publicKey: Array(repeating: 9, count: 32)).description

    func problems(_ export: String) -> [ConfigProblem] {
        do {
            _ = try Settings.parse(SettingsTests.minimal + "\n[export]\n" + export, file: "t.toml")
            Issue.record("expected the config to be refused")
            return []
        } catch {
            return error.problems
        }
    }

    @Test func defaultsAreUnsealedUnscheduledAndRefusePlaintextEmail() throws {
        let s = try Settings.parse(SettingsTests.minimal + "\n[export]\nemail = \"t@example.org\"\n", file: "t")
        #expect(s.export.ageRecipients.isEmpty)
        #expect(s.export.plaintext == false)
        #expect(s.export.schedule == nil)
        #expect(s.export.signingKey == "/var/lib/venue-beacon/node-signing.key")
        #expect(s.export.scheduleState == "/var/lib/venue-beacon/scheduled-export.state")
        #expect(s.export.refusesPlaintextEmail)
        #expect(s.notes.contains { $0.contains("export.recipients is empty: emailed exports are refused") })
    }

    @Test func recipientsPlaintextScheduleAndKeyRoundTrip() throws {
        let text = SettingsTests.minimal + """

            [export]
            recipients = ["\(Self.recipient)", "\(Self.recipient.uppercased())"]
            schedule = "monday-friday 03:30"
            signing_key = "/srv/state/key"
            """
        let s = try Settings.parse(text, file: "t")
        #expect(s.export.ageRecipients.count == 2)
        #expect(!s.export.refusesPlaintextEmail)
        #expect(s.export.schedule?.description == "monday,tuesday,wednesday,thursday,friday 03:30")
        #expect(s.export.scheduleState == "/srv/state/scheduled-export.state")
        // What config check prints reads back the same.
        let again = try Settings.parse(s.effectiveTOML, file: "printed")
        #expect(again.export == s.export)
    }

    @Test func mistakesNameTheKeyAndWhatIsAllowed() {
        var typo = Array(Self.recipient)
        typo[8] = typo[8] == "q" ? "p" : "q"
        let p = problems("""
            recipients = ["\(String(typo))", "ssh-ed25519 AAAAC3", 7]
            schedule = "sometimes"
            signing_key = "relative/key"
            plaintext = "yes"
            """)
        let recipients = p.filter { $0.key == "export.recipients" }
        #expect(recipients.count == 3)
        #expect(recipients.contains { $0.problem.contains("wrong checksum") && $0.value == "\"\(String(typo))\"" })
        #expect(recipients.contains { $0.problem.contains("is not an age public key") })
        #expect(p.first { $0.key == "export.schedule" }?.problem.contains("\"daily 03:30\"") == true)
        #expect(p.first { $0.key == "export.signing_key" }?.problem.contains("absolute path") == true)
        #expect(p.first { $0.key == "export.plaintext" }?.problem == "must be true or false")
    }

    @Test func aWeakRecipientIsRefusedBesideARealOne() {
        let weak = AgeRecipient(publicKey: SealingTests.bytes(hex: SealingTests.weakKeys["order 8"]!)).description
        let real = AgeIdentity.generate().recipient.description
        let p = problems("email = \"t@example.org\"\nrecipients = [\"\(real)\", \"\(weak)\"]")
        let problem = p.first { $0.key == "export.recipients" }
        #expect(p.count == 1)
        #expect(problem?.value == "\"\(weak)\"")
        #expect(problem?.problem.contains("weak key (a low-order X25519 point)") == true)
    }
}
