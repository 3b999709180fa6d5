import Foundation
import Testing

/// `venue-beacon exposure check` and `export --exposures` end to end, against a scenario built by
/// a reference implementation of the Exposure Notification derivation in Python (`cryptography`),
/// which shares nothing with the product's Swift code: it signs its own key files with its own
/// key, derives the identifiers a positive case's phone sent at chosen times, writes them as a
/// sightings file (with decoys, and an identifier heard 3 h outside its interval), and computes
/// the report the command must print.
@Suite struct ExposureCommandTests {
    struct Scenario {
        let dir: TemporaryDirectory
        let config: String
        let expected: [String: Any]

        init(verificationKey: String? = nil) throws {
            dir = try TemporaryDirectory("exposure-cli")
            let script = try dir.write("scenario.py", ExposureCommandTests.reference)
            let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, dir.path("")])
            guard made.status == 0 else { throw ScenarioError(message: made.output) }
            let data = try #require(FileManager.default.contents(atPath: dir.path("expected.json")))
            expected = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let key = verificationKey ?? (expected["public_key"] as? String ?? "")
            config = try dir.write("venue-beacon.toml", """
                [venue]
                country = 826
                state = 4
                code = 123123
                name = "Erin's Stakehouse"
                [diary]
                path = "\(dir.path("diary.sqlite"))"
                share_days = 14
                [exposure]
                verification_keys = ["310:v1:\(key)"]
                nhs_venue_id = "ERIN-123"
                [export]
                signing_key = "\(dir.path("node-signing.key"))"
                """)
        }

        var now: String { expected["now"] as? String ?? "" }

        func run(_ args: [String]) throws -> ProcessRunner.Result {
            try ProcessRunner.venueBeacon(args + ["--config", config])
        }

        func replay() throws {
            let replay = try run(["diary", "replay", dir.path("sightings.csv")])
            #expect(replay.status == 0, "\(replay.output)")
        }
    }

    struct ScenarioError: Error { var message: String }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func reportMatchesTheReference() throws {
        let s = try Scenario()
        defer { s.dir.remove() }
        try s.replay()
        let check = try s.run(["exposure", "check", s.dir.path("a.zip"), s.dir.path("b.zip"), "--json", "--now", s.now])
        #expect(check.status == 0, "\(check.output)")
        let report = try Self.json(check.stdout)

        let files = try #require(report["files"] as? [[String: Any]])
        #expect(files.map { $0["region"] as? String } == ["GB", "GB"])
        #expect(files.map { $0["keys"] as? Int } == [3, 2])
        #expect(files.allSatisfy { $0["verified"] as? Bool == true })
        #expect(report["keys"] as? Int == 4)  // k1 in both files counts once; k2 revised

        let expected = try #require(s.expected["exposures"] as? [[String: Any]])
        let got = try #require(report["exposures"] as? [[String: Any]])
        #expect(got.count == expected.count)
        for want in expected {
            let key = try #require(want["key"] as? String)
            let e = try #require(got.first { $0["key"] as? String == key }, "no exposure for \(key)")
            for field in ["transmission_risk_level", "days_since_onset_of_symptoms", "tx_power"] {
                #expect(e[field] as? Int == want[field] as? Int, "\(key) \(field)")
            }
            for field in ["report_type", "first_seen", "last_seen"] {
                #expect(e[field] as? String == want[field] as? String, "\(key) \(field)")
            }
            for field in ["minutes", "risk_score"] {
                #expect(e[field] as? Double == want[field] as? Double, "\(key) \(field)")
            }
            let att = e["attenuation_db"] as? [String: Double]
            let wantAtt = want["attenuation_db"] as? [String: Double]
            #expect(att == wantAtt, "\(key) attenuation")
            #expect((e["visits"] as? [Int])?.count == want["visit_count"] as? Int, "\(key) visits")
        }
        let windows = try #require(report["windows"] as? [[String: String]])
        #expect(windows == s.expected["windows"] as? [[String: String]])

        // The NHS risky-venue upload CSV: the same windows.
        let nhs = try s.run(["exposure", "check", s.dir.path("a.zip"), s.dir.path("b.zip"), "--format", "nhs-risky-venues", "--now", s.now])
        #expect(nhs.status == 0, "\(nhs.output)")
        let rows = nhs.stdout.split(separator: "\n")
        #expect(rows.first == "# venue_id, start_time, end_time, message_type, optional_parameter")
        #expect(rows.dropFirst().map(String.init) == windows.map { "\"ERIN-123\", \"\($0["start"]!)\", \"\($0["end"]!)\", \"M1\", \"\"" })

        // Data minimisation: only the matched visits leave the diary.
        let export = try s.run(["export", "--exposures", s.dir.path("a.zip"), s.dir.path("b.zip"), "--now", s.now])
        #expect(export.status == 0, "\(export.output)")
        let matchedVisits = got.flatMap { $0["visits"] as? [Int] ?? [] }
        let lines = export.stdout.split(separator: "\r\n")
        #expect(lines.count == 1 + matchedVisits.count)
        #expect(Set(lines.dropFirst().compactMap { Int($0.prefix { $0 != "," }) }) == Set(matchedVisits))
        // To a file: the same bytes, and beside them the node's signature, whose signed comment
        // says how many visits and windows it holds.
        let file = s.dir.path("matched.csv")
        let written = try s.run(["export", "--exposures", s.dir.path("a.zip"), s.dir.path("b.zip"), "--now", s.now, "--output", file])
        #expect(written.status == 0, "\(written.output)")
        #expect(FileManager.default.contents(atPath: file) == Data(export.stdout.utf8))
        let identity = try s.run(["identity"])
        let publicKey = String(identity.stdout.split(separator: "\n").last ?? "")
        let verified = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/minisign"), ["-Vm", file, "-P", publicKey])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("file:matched.csv"), "\(verified.output)")
        #expect(verified.output.contains("visits:\(lines.count - 1)\texposure_windows:\(windows.count)"), "\(verified.output)")

        // The text report says the same.
        let text = try s.run(["exposure", "check", s.dir.path("a.zip"), "--now", s.now])
        #expect(text.status == 0)
        #expect(text.stdout.contains("signature verified"))
        #expect(text.stdout.contains("time windows a positive case was at the venue"))
    }

    @Test func badFilesAreRefusedWithExit65() throws {
        let s = try Scenario()
        defer { s.dir.remove() }
        try s.replay()
        let before = try Data(contentsOf: URL(fileURLWithPath: s.dir.path("diary.sqlite")))
        let tampered = try s.run(["exposure", "check", s.dir.path("a.zip"), s.dir.path("tampered.zip"), "--json", "--now", s.now])
        #expect(tampered.status == 65)
        #expect(tampered.stdout.isEmpty)
        #expect(tampered.stderr.contains("tampered.zip: signature not verified"), "\(tampered.stderr)")
        let truncated = try s.run(["exposure", "check", s.dir.path("truncated.zip"), "--now", s.now])
        #expect(truncated.status == 65)
        #expect(truncated.stderr.contains("truncated.zip: not a readable key export zip"), "\(truncated.stderr)")
        let missing = try s.run(["exposure", "check", s.dir.path("absent.zip"), "--now", s.now])
        #expect(missing.status == 66)
        let notZip = try s.dir.write("sightings.zip", "time,kind,payload,rssi\n")
        #expect(try s.run(["exposure", "check", notZip, "--now", s.now]).status == 65)
        #expect(try s.run(["export", "--exposures", s.dir.path("tampered.zip"), "--now", s.now]).status == 65)
        // Nothing changed.
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.dir.path("diary.sqlite"))) == before)

        // --unverified reads it and says so.
        let unverified = try s.run(["exposure", "check", s.dir.path("tampered.zip"), "--unverified", "--json", "--now", s.now])
        #expect(unverified.status == 0, "\(unverified.output)")
        let files = try Self.json(unverified.stdout)["files"] as? [[String: Any]]
        #expect(files?.first?["verified"] as? Bool == false)
        #expect(unverified.stderr.contains("without a verified signature"))
    }

    /// Issue 24 item 10: a directory or a FIFO named as a key file is said as it is (never opened:
    /// a FIFO would block), zip64 is named, and a file's size is not held: a 3 GB sparse file
    /// (the signed a.zip with its central directory 3 GB on) is read, and a 3 GB hole refused,
    /// within 100 MB of peak RSS.
    @Test func notRegularZip64AndHugeFiles() throws {
        let s = try Scenario()
        defer { s.dir.remove() }
        try s.replay()
        let directory = s.dir.path("keys.zip")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let dir = try s.run(["exposure", "check", s.dir.path("a.zip"), directory, "--now", s.now])
        #expect(dir.status == 66)
        #expect(dir.stdout.isEmpty)
        #expect(dir.stderr.contains("keys.zip: is a directory, not a key export file (.zip)"), "\(dir.stderr)")
        #expect(!dir.stderr.contains("NSCocoaErrorDomain"))

        let fifo = s.dir.path("fifo.zip")
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = try s.run(["exposure", "check", fifo, "--now", s.now])
        #expect(piped.status == 66)
        #expect(piped.stderr.contains("fifo.zip: is a FIFO (named pipe), not a key export file (.zip)"), "\(piped.stderr)")
        let exported = try s.run(["export", "--exposures", fifo, "--now", s.now])
        #expect(exported.status == 66 && exported.stderr.contains("is a FIFO"), "\(exported.stderr)")

        // a.zip as python's zipfile wrote it: no comment, so its end of central directory is the
        // last 22 bytes; the central directory's offset is at 16 in it.
        let zip = Array(try Data(contentsOf: URL(fileURLWithPath: s.dir.path("a.zip"))))
        let eocd = zip.count - 22
        #expect(zip[eocd..<(eocd + 4)] == [0x50, 0x4b, 0x05, 0x06])
        var zip64 = zip
        zip64.replaceSubrange((eocd + 16)..<(eocd + 20), with: [0xFF, 0xFF, 0xFF, 0xFF])
        try Data(zip64).write(to: URL(fileURLWithPath: s.dir.path("zip64.zip")))
        let marked = try s.run(["exposure", "check", s.dir.path("zip64.zip"), "--now", s.now])
        #expect(marked.status == 65)
        #expect(marked.stderr.contains("zip64.zip: not a readable key export zip: zip64 archives are not key export files"), "\(marked.stderr)")

        let offset = Int(zip[eocd + 16]) | Int(zip[eocd + 17]) << 8 | Int(zip[eocd + 18]) << 16 | Int(zip[eocd + 19]) << 24
        let far = 3 << 30
        var tail = Array(zip[offset...])
        let at = tail.count - 22 + 16
        tail.replaceSubrange(at..<(at + 4), with: (0..<4).map { UInt8(truncatingIfNeeded: far >> (8 * $0)) })
        let huge = s.dir.path("huge.zip")
        #expect(FileManager.default.createFile(atPath: huge, contents: Data(zip[..<offset])))
        let handle = try #require(FileHandle(forWritingAtPath: huge))
        try handle.seek(toOffset: UInt64(far))
        try handle.write(contentsOf: Data(tail))
        try handle.close()
        let junk = s.dir.path("junk.zip")
        #expect(FileManager.default.createFile(atPath: junk, contents: nil))
        #expect(truncate(junk, off_t(far)) == 0)

        /// The command under /usr/bin/time: its result and its peak RSS in KiB.
        func measured(_ args: [String]) throws -> (ProcessRunner.Result, Int) {
            var result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/time"), ["-f", "peak-rss-kib %M", ProcessRunner.venueBeacon.path] + args + ["--config", s.config])
            let line = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak-rss-kib ") } ?? ""
            result.stderr = result.stderr.replacingOccurrences(of: String(line), with: "")
            return (result, Int(line.dropFirst("peak-rss-kib ".count)) ?? Int.max)
        }
        let (read, readRSS) = try measured(["exposure", "check", huge, "--json", "--now", s.now])
        #expect(read.status == 0, "\(read.output)")
        let report = try Self.json(read.stdout)
        #expect((report["files"] as? [[String: Any]])?.first?["keys"] as? Int == 3)
        #expect((report["exposures"] as? [[String: Any]])?.isEmpty == false)
        #expect(readRSS < 100_000, "peak RSS \(readRSS) KiB reading a 3 GB file")
        let (refused, refusedRSS) = try measured(["exposure", "check", junk, "--now", s.now])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("junk.zip: not a readable key export zip: no end of central directory"), "\(refused.stderr)")
        #expect(refusedRSS < 100_000, "peak RSS \(refusedRSS) KiB refusing a 3 GB file")
    }

    @Test func anotherAuthoritysKeyIsRefused() throws {
        // A valid P-256 key that did not sign the files.
        let other = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEzum1H4FCG4FhaisBLwU5wHPKq6HyBVCvzgPqP86gsXOAe+9MaWaRRAS+gpayFhAtgIcC2VogEFjJgSGJ7JjZpA=="
        let s = try Scenario(verificationKey: other)
        defer { s.dir.remove() }
        try s.replay()
        let check = try s.run(["exposure", "check", s.dir.path("a.zip"), "--now", s.now])
        #expect(check.status == 65)
        #expect(check.stderr.contains("does not match export.bin under key \"310\" \"v1\""), "\(check.stderr)")
    }

    @Test func badVerificationKeyConfig() throws {
        let dir = try TemporaryDirectory("exposure-config")
        defer { dir.remove() }
        let config = try dir.write("c.toml", """
            [venue]
            country = 826
            state = 4
            code = 1
            name = "V"
            [diary]
            path = "\(dir.path("d.sqlite"))"
            [exposure]
            verification_keys = ["310-v1-abc"]
            attenuation_weights = [100, 50]
            """)
        let check = try ProcessRunner.venueBeacon(["exposure", "check", "x.zip", "--config", config])
        #expect(check.status == 78)
        #expect(check.stderr.contains("exposure.verification_keys"))
        #expect(check.stderr.contains("exposure.attenuation_weights"))
        #expect(check.stderr.contains("must be a list of 3 whole numbers of percent from 0 to 100"))
    }

    static let reference = #"""
# A reference implementation of the Exposure Notification derivation and of the venue match,
# written from the specification with Python's `cryptography`, sharing nothing with the
# product's Swift code. Writes signed key export zips, a sightings file, the public key, and the
# report `exposure check --json` must produce.
import base64, json, os, random, struct, sys, zipfile, datetime
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

out = sys.argv[1]
rng = random.Random(18)

def hkdf(tek, info):
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=info).derive(tek)

def rpi(tek, interval):
    enc = Cipher(algorithms.AES(hkdf(tek, b"EN-RPIK")), modes.ECB()).encryptor()
    return enc.update(b"EN-RPI" + bytes(6) + struct.pack("<I", interval)) + enc.finalize()

def aem(tek, rpi_bytes, metadata):
    enc = Cipher(algorithms.AES(hkdf(tek, b"EN-AEMK")), modes.CTR(rpi_bytes)).encryptor()
    return enc.update(metadata) + enc.finalize()

# protobuf writer
def varint(v):
    b = bytearray()
    while True:
        x = v & 0x7F; v >>= 7
        if v: b.append(x | 0x80)
        else: b.append(x); return bytes(b)
def f_int(n, v): return varint(n << 3) + varint(v & 0xFFFFFFFFFFFFFFFF)
def f_sint(n, v): return varint(n << 3) + varint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)
def f_bytes(n, b): return varint(n << 3 | 2) + varint(len(b)) + b
def f_fixed64(n, v): return varint(n << 3 | 1) + struct.pack("<Q", v)

signing = ec.generate_private_key(ec.SECP256R1())
spki = signing.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
sig_info = f_bytes(3, b"v1") + f_bytes(4, b"310") + f_bytes(5, b"1.2.840.10045.4.3.2")

def key_msg(k):
    m = f_bytes(1, k["tek"]) + f_int(2, k["trl"]) + f_int(3, k["start"]) + f_int(4, k["period"]) + f_int(5, k["report_type"])
    return m + f_sint(6, k["onset"])

def export_zip(path, keys, revised=(), tamper=False, compress=zipfile.ZIP_DEFLATED):
    b = b"EK Export v1    " + f_fixed64(1, 1795000000) + f_fixed64(2, 1795086400) + f_bytes(3, b"GB") + f_int(4, 1) + f_int(5, 1)
    b += f_bytes(6, sig_info)
    b += b"".join(f_bytes(7, key_msg(k)) for k in keys) + b"".join(f_bytes(8, key_msg(k)) for k in revised)
    der = signing.sign(b, ec.ECDSA(hashes.SHA256()))
    sig = f_bytes(1, f_bytes(1, sig_info) + f_int(2, 1) + f_int(3, 1) + f_bytes(4, der))
    if tamper:  # one bit of the first key's key_data, after signing
        b = bytearray(b); b[b.index(keys[0]["tek"])] ^= 0x01; b = bytes(b)
    with zipfile.ZipFile(path, "w", compress) as z:
        z.writestr("export.bin", b); z.writestr("export.sig", sig)

day = 1795219200 // 600 // 144 * 144  # the key day (2026-11-21)
def t(interval): return interval * 600
tek = lambda: bytes(rng.randrange(256) for _ in range(16))
k1 = dict(tek=tek(), trl=6, start=day, period=144, report_type=1, onset=2)
k2 = dict(tek=tek(), trl=3, start=day, period=72, report_type=1, onset=12)
k2_revised = dict(k2, trl=5, report_type=2)
k3 = dict(tek=tek(), trl=4, start=day, period=144, report_type=1, onset=0)  # never at the venue
k4 = dict(tek=tek(), trl=2, start=day + 80, period=1, report_type=3, onset=-1)
export_zip(os.path.join(out, "a.zip"), [k1, k2, k3])
export_zip(os.path.join(out, "b.zip"), [k1, k4], revised=[k2_revised], compress=zipfile.ZIP_STORED)
export_zip(os.path.join(out, "tampered.zip"), [k1, k2, k3], tamper=True)
with open(os.path.join(out, "a.zip"), "rb") as f: whole = f.read()
with open(os.path.join(out, "truncated.zip"), "wb") as f: f.write(whole[: len(whole) * 2 // 3])

rows = []  # (time, payload hex, rssi)
visits = []  # expected matched visits: (key, start, end, rssis, tx or None)
def phone(key, interval, start, minutes, rssi0, tx=None, matched=True):
    r = rpi(key["tek"], interval)
    payload = r
    if tx is not None:
        payload = r + aem(key["tek"], r, bytes([0x40, tx & 0xFF, 0, 0]))
    rssis = []
    for i in range(minutes * 2 + 1):
        rssi = rssi0 + rng.randrange(-3, 4)
        rssis.append(rssi)
        rows.append((start + 30 * i, payload.hex(), rssi))
    if matched:
        visits.append(dict(key=key, start=start, end=start + 30 * minutes * 2, rssis=rssis, tx=tx))

# k1: two consecutive identifiers of one phone (10:00 and 10:10), with metadata (tx -10 dBm)
phone(k1, day + 60, t(day + 60) + 30, 8, -62, tx=-10)
phone(k1, day + 61, t(day + 61) + 20, 9, -60, tx=-10)
# k1: an identifier heard 3 h after its interval: no match
phone(k1, day + 100, t(day + 101) + 3 * 3600, 5, -60, tx=-10, matched=False)
# k2 (revised in b.zip): heard 1 h 50 min after its interval, no metadata (older phones' rows)
phone(k2, day + 20, t(day + 21) + 6600, 6, -75)
# k4: rolling period 1, heard during its only interval, metadata tx 0
phone(k4, day + 80, t(day + 80) + 100, 4, -50, tx=0)
# decoys: identifiers no key derives, some with metadata
for n in range(40):
    start = t(day + 30 + n * 2) + rng.randrange(600)
    r = bytes(rng.randrange(256) for _ in range(20 if n % 2 else 16))
    for i in range(9):
        rows.append((start + 30 * i, r.hex(), -70))

rows.sort(key=lambda r: r[0])
with open(os.path.join(out, "sightings.csv"), "w") as f:
    f.write("time,kind,payload,rssi\n")
    for time, payload, rssi in rows:
        f.write(f"{time},gaen,{payload},{rssi}\n")

def iso(x): return datetime.datetime.fromtimestamp(x, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
report_types = {1: "confirmed_test", 2: "confirmed_clinical_diagnosis", 3: "self_report"}
exposures = []
for key in (k1, k2_revised, k4):
    vs = [v for v in visits if v["key"]["tek"] == key["tek"]]
    tx = next((v["tx"] for v in vs if v["tx"] is not None), None)
    att = None
    with_tx = [v for v in vs if v["tx"] is not None]
    if with_tx:
        rs = [r for v in with_tx for r in v["rssis"]]
        att = {"min": float(tx - max(rs)), "mean": round(tx - sum(rs) / len(rs), 1)}
    # risk, defaults: thresholds 55/63 dB, weights 100/50/0, TRL weights 100, onset -2...9 else 0
    weighted = 0.0
    for v in vs:
        minutes = (v["end"] - v["start"]) / 60
        if v["tx"] is None: w = 50
        else:
            a = v["tx"] - sum(v["rssis"]) / len(v["rssis"])
            w = 100 if a < 55 else 50 if a < 63 else 0
        weighted += minutes * w / 100
    score = round(weighted * (1 if -2 <= key["onset"] <= 9 else 0), 1)
    exposures.append({
        "key": key["tek"].hex(), "transmission_risk_level": key["trl"], "report_type": report_types[key["report_type"]],
        "days_since_onset_of_symptoms": key["onset"], "first_seen": iso(min(v["start"] for v in vs)),
        "last_seen": iso(max(v["end"] for v in vs)), "minutes": round(sum(v["end"] - v["start"] for v in vs) / 60, 1),
        "tx_power": tx, "attenuation_db": att, "visit_count": len(vs), "risk_score": score,
    })
spans = sorted((v["start"], v["end"]) for v in visits)
windows = []
for s, e in spans:
    if windows and s <= windows[-1][1]: windows[-1][1] = max(windows[-1][1], e)
    else: windows.append([s, e])
expected = {
    "public_key": base64.b64encode(spki).decode(), "keys": 4, "now": iso(t(day + 144 * 2)),
    "exposures": exposures, "windows": [{"start": iso(s), "end": iso(e)} for s, e in windows],
}
with open(os.path.join(out, "expected.json"), "w") as f: json.dump(expected, f, indent=1)
"""#
}
