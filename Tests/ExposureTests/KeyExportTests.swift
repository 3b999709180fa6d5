import Crypto
import Foundation
import Testing
@testable import Exposure

/// Key export files: parsing, signature verification, and every way a file is refused.
struct KeyExportTests {
    nonisolated(unsafe) static let verificationKeys = [VerificationKey(id: "test-id", version: "v1", text: TestExportFile.publicKeyBase64)!]

    static func file() -> TestExportFile {
        var f = TestExportFile()
        f.keys = [
            TestKey(data: Array(0..<16), trl: 6, start: 2_991_456, period: 144, reportType: 1, onset: -2),
            TestKey(data: Array(16..<32), trl: nil, start: 2_991_600, period: nil, reportType: nil, onset: nil),
        ]
        f.revisedKeys = [TestKey(data: Array(0..<16), trl: 3, start: 2_991_456, period: 144, reportType: 5, onset: 1)]
        return f
    }

    @Test func parsesAndVerifies() throws {
        let export = try ReadExport(zip: Self.file().zip())
        #expect(export.region == "GB")
        #expect(export.batchNumber == 1 && export.batchSize == 1)
        #expect(export.startTimestamp == 1_795_000_000 && export.endTimestamp == 1_795_086_400)
        #expect(export.signatureInfos == [SignatureInfo(verificationKeyVersion: "v1", verificationKeyID: "test-id", signatureAlgorithm: "1.2.840.10045.4.3.2")])
        #expect(export.keys == [
            DiagnosisKey(keyData: Array(0..<16), transmissionRiskLevel: 6, rollingStartIntervalNumber: 2_991_456, rollingPeriod: 144, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: -2),
            // rolling_period absent: 144, as export.proto's default says.
            DiagnosisKey(keyData: Array(16..<32), rollingStartIntervalNumber: 2_991_600, rollingPeriod: 144),
        ])
        #expect(export.revisedKeys.first?.reportType == .revoked)
        try export.verify(with: Self.verificationKeys)
    }

    @Test func revisedKeysReplaceAndDuplicatesCountOnce() throws {
        var set = DiagnosisKeySet()
        let export = try ReadExport(zip: Self.file().zip())
        set.add(export)
        set.add(export)  // the same file twice
        #expect(set.keys.count == 2)
        #expect(set.keys[0].transmissionRiskLevel == 3 && set.keys[0].reportType == .revoked)
        // A plain key met again does not replace the first.
        var other = Self.file()
        other.keys = [TestKey(data: Array(16..<32), trl: 8, start: 2_991_600)]
        other.revisedKeys = []
        set.add(try ReadExport(zip: other.zip()))
        #expect(set.keys.count == 2 && set.keys[1].transmissionRiskLevel == nil)
    }

    @Test func flippedBitInExportBinIsRefused() throws {
        let zip = Self.file().zip { bin in
            var b = bin
            b[b.count - 3] ^= 0x01  // a bit of the last key's data; the zip's CRC is made for it
            return b
        }
        let export = try ReadExport(zip: zip)
        #expect(throws: ExposureFileError.self) { try export.verify(with: Self.verificationKeys) }
        do {
            try export.verify(with: Self.verificationKeys)
        } catch {
            #expect(error.description.contains("does not match export.bin"))
        }
    }

    @Test func wrongKeyIsRefused() throws {
        let export = try ReadExport(zip: Self.file().zip())
        let other = P256.Signing.PrivateKey().publicKey
        #expect(throws: ExposureFileError.self) { try export.verify(with: [VerificationKey(id: "test-id", version: "v1", publicKey: other)]) }
        // No key configured under the file's id and version.
        do {
            try export.verify(with: [VerificationKey(id: "other", version: "v1", publicKey: TestExportFile.signingKey.publicKey)])
            Issue.record("verified without a matching key")
        } catch {
            #expect(error.description.contains("no public key configured for verification_key_id \"test-id\", version \"v1\""))
        }
        // Signed by another key, named as ours.
        var forged = Self.file()
        forged.signer = P256.Signing.PrivateKey()
        #expect(throws: ExposureFileError.self) { try ReadExport(zip: forged.zip()).verify(with: Self.verificationKeys) }
    }

    @Test func truncatedZipIsRefused() throws {
        let zip = Self.file().zip()
        for cut in [0, 10, zip.count / 2, zip.count - 10] {
            #expect(throws: ExposureFileError.self) { try ReadExport(zip: Array(zip.prefix(cut))) }
        }
        #expect(throws: ExposureFileError.self) { try ReadExport(zip: Array("not a zip at all".utf8)) }
    }

    @Test func damagedMemberFailsItsCRC() throws {
        var zip = Self.file().zip()
        zip[40] ^= 0xFF  // inside export.bin's data (its local header is 30 + 10 bytes)
        #expect(throws: ExposureFileError.badZip("export.bin: CRC-32 mismatch (damaged archive)")) { try ReadExport(zip: zip) }
    }

    @Test func missingMembers() {
        let bin = Self.file().exportBin
        #expect(throws: ExposureFileError.missingMember("export.sig")) { try ReadExport(zip: ZipWriter.stored([("export.bin", bin)])) }
        #expect(throws: ExposureFileError.missingMember("export.bin")) { try ReadExport(zip: ZipWriter.stored([("export.sig", [])])) }
    }

    @Test func wrongHeader() {
        let bin = Self.file().exportBin
        var wrong = bin
        wrong[11] = UInt8(ascii: "2")  // "EK Export v2"
        #expect(throws: ExposureFileError.badHeader) { try ReadExport(exportBin: wrong, exportSig: []) }
        #expect(throws: ExposureFileError.badHeader) { try ReadExport(exportBin: Array(bin.prefix(10)), exportSig: []) }
    }

    @Test func truncatedProtobuf() {
        let bin = Self.file().exportBin
        #expect(throws: ExposureFileError.self) { try ReadExport(exportBin: Array(bin.dropLast(5)), exportSig: []) }
        do {
            _ = try ReadExport(exportBin: Array(bin.dropLast(5)), exportSig: [])
        } catch {
            #expect(error.description.hasPrefix("export.bin is not a valid TemporaryExposureKeyExport"))
        }
    }

    @Test func invalidKeys() {
        func refused(_ key: TestKey) -> String? {
            var f = TestExportFile()
            f.keys = [key]
            do {
                _ = try ReadExport(exportBin: f.exportBin, exportSig: [])
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refused(TestKey(data: Array(0..<15), start: 1)) == "export.bin holds an invalid key: keys[0]: key_data is 15 bytes; a temporary exposure key is 16")
        #expect(refused(TestKey(data: Array(0..<16), start: 1, period: 145))?.contains("rolling_period 145 is out of range (1–144)") == true)
        #expect(refused(TestKey(data: Array(0..<16), start: 1, period: 0))?.contains("rolling_period 0 is out of range") == true)
        #expect(refused(TestKey(data: Array(0..<16), trl: 9, start: 1))?.contains("transmission_risk_level 9 is out of range") == true)
        #expect(refused(TestKey(data: Array(0..<16), start: 1, period: 1)) == nil)
    }

    @Test func deflatedMembers() throws {
        // A deflate stream of "hello hello hello" (raw, as zip stores it), written with zlib's
        // fixed Huffman codes by Python's zlib.compressobj(wbits=-15).
        let deflated: [UInt8] = [0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x90, 0x00]
        func inflated(_ bytes: ArraySlice<UInt8>, size: Int, step: Int) throws(ExposureFileError) -> [UInt8] {
            let inflater = try Inflater(name: "x", size: size)
            var out: [UInt8] = []
            for at in stride(from: bytes.startIndex, to: bytes.endIndex, by: step) {
                try inflater.feed(bytes[at..<min(at + step, bytes.endIndex)]) { out += $0 }
            }
            try inflater.finish()
            return out
        }
        // Fed whole or a byte at a time: the same bytes.
        let whole = try inflated(deflated[...], size: 17, step: deflated.count)
        let bytewise = try inflated(deflated[...], size: 17, step: 1)
        #expect(whole == Array("hello hello hello".utf8))
        #expect(bytewise == whole)
        // Cut short, or inflating to another size than the member says: refused.
        let damaged = ExposureFileError.badZip("x: the deflated data is damaged or truncated")
        #expect(throws: damaged) { try inflated(deflated.prefix(5), size: 17, step: 1) }
        #expect(throws: damaged) { try inflated(deflated[...], size: 16, step: 1) }
        #expect(throws: damaged) { try inflated(deflated[...], size: 18, step: 3) }
    }
}
