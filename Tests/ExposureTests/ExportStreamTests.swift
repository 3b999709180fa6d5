import Testing
@testable import Exposure

/// export.bin read as it comes (issue 24 item 10): keys and header fields cut anywhere by the
/// pieces it is fed in, a file of many times more keys than a piece holds handed on key by key,
/// and the refusals of reading it whole.
struct ExportStreamTests {
    typealias Found = ExportBinParser.Found

    /// An export.bin with its header fields in an unusual order, among the keys and after them,
    /// and fields the parser does not know (a number, bytes, a fixed32) between them.
    static let mixedBin: [UInt8] = {
        let f = KeyExportTests.file()
        var m = KeyExport.header
        m += ProtoWriter.bytes(7, TestExportFile.keyMessage(f.keys[0]))
        m += ProtoWriter.string(3, "DE") + ProtoWriter.int(9, 300) + ProtoWriter.bytes(10, Array(repeating: 7, count: 200))
        m += ProtoWriter.bytes(8, TestExportFile.keyMessage(f.revisedKeys[0]))
        m += ProtoWriter.fixed64(2, 1_795_086_400) + ProtoWriter.tag(11, 5) + [1, 2, 3, 4]
        m += ProtoWriter.bytes(7, TestExportFile.keyMessage(f.keys[1]))
        m += ProtoWriter.bytes(6, f.signatureInfo) + ProtoWriter.int(5, 3) + ProtoWriter.fixed64(1, 1_795_000_000)
        return m
    }()

    /// What the parser made of `pieces`: the keys in order, the header fields, or its refusal.
    struct Parsed: Equatable {
        var keys: [DiagnosisKey] = []
        var revised: [Bool] = []
        var fields: [String] = []
        var refusal: ExposureFileError?
    }

    static func parse(_ pieces: [ArraySlice<UInt8>]) -> Parsed {
        var parser = ExportBinParser()
        var parsed = Parsed()
        var found: [Found] = []
        do {
            for piece in pieces {
                try parser.feed(piece, into: &found)
                parsed.keys += found.map(\.key)
                parsed.revised += found.map(\.revised)
                found.removeAll()
            }
            try parser.finish()
        } catch {
            parsed.refusal = error
        }
        parsed.fields = [
            "\(parser.startTimestamp ?? 0)", "\(parser.endTimestamp ?? 0)", parser.region, "\(parser.batchNumber)", "\(parser.batchSize)",
            "\(parser.signatureInfos)", "\(parser.keyCount)", "\(parser.revisedKeyCount)",
        ]
        return parsed
    }

    static func pieces(_ bytes: [UInt8], cuts: [Int]) -> [ArraySlice<UInt8>] {
        let bounds = [0] + cuts + [bytes.count]
        return zip(bounds, bounds.dropFirst()).map { bytes[$0..<$1] }
    }

    @Test func keysAndFieldsCutAtEveryOffset() {
        let bin = Self.mixedBin
        let whole = Self.parse([bin[...]])
        let f = KeyExportTests.file()
        #expect(whole.refusal == nil)
        #expect(whole.keys == [
            DiagnosisKey(keyData: Array(0..<16), transmissionRiskLevel: 6, rollingStartIntervalNumber: 2_991_456, rollingPeriod: 144, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: -2),
            DiagnosisKey(keyData: Array(0..<16), transmissionRiskLevel: 3, rollingStartIntervalNumber: 2_991_456, rollingPeriod: 144, reportType: .revoked, daysSinceOnsetOfSymptoms: 1),
            DiagnosisKey(keyData: Array(16..<32), rollingStartIntervalNumber: 2_991_600, rollingPeriod: 144),
        ])
        #expect(whole.revised == [false, true, false])
        let info = SignatureInfo(verificationKeyVersion: f.keyVersion, verificationKeyID: f.keyID, signatureAlgorithm: "1.2.840.10045.4.3.2")
        #expect(whole.fields == ["1795000000", "1795086400", "DE", "1", "3", "\([info])", "2", "1"])
        // Cut in two at every offset, and fed a byte at a time: the same.
        for cut in 0...bin.count {
            #expect(Self.parse(Self.pieces(bin, cuts: [cut])) == whole, "cut at \(cut)")
        }
        #expect(Self.parse(bin.indices.map { bin[$0...$0] }) == whole)
    }

    /// Every prefix of export.bin fed a byte at a time is refused (or read) as when fed whole: a
    /// field cut by the end of the data is found at its end, with the whole reading's message.
    @Test func everyTruncationIsRefusedAsWhole() {
        let bin = Self.mixedBin
        var refused = 0
        for count in 0..<bin.count {
            let prefix = Array(bin[..<count])
            let whole = Self.parse([prefix[...]])
            let bytewise = Self.parse(prefix.indices.map { prefix[$0...$0] })
            #expect(bytewise.refusal == whole.refusal, "\(count) bytes")
            #expect(bytewise.keys == whole.keys, "\(count) bytes")
            if whole.refusal != nil { refused += 1 }
        }
        // Only the header alone and the ends of the 10 fields before the last are whole messages.
        #expect(refused == bin.count - 11)
        #expect(Self.parse([bin[..<10]]).refusal == .badHeader)
        #expect(Self.parse([bin.dropLast(12)]).refusal == .badProtobuf("field 6 is longer than what is left"))
        #expect(Self.parse([bin.dropLast(1)]).refusal == .badProtobuf("a fixed-size number runs past the end"))
    }

    /// A field the parser keeps (a key) is never held past its bound; fields it does not need are
    /// skipped whatever their length.
    @Test func longFieldsAreSkippedOrRefused() {
        let long = ExportBinParser.maximumFieldBytes + 1
        let unknown = KeyExport.header + ProtoWriter.bytes(12, Array(repeating: 0, count: long)) + ProtoWriter.string(3, "GB")
        let read = Self.parse(Self.pieces(unknown, cuts: Array(stride(from: 1000, to: unknown.count, by: 65_536))))
        #expect(read.refusal == nil && read.fields[2] == "GB")
        let key = KeyExport.header + ProtoWriter.bytes(7, ProtoWriter.bytes(1, Array(0..<16)) + ProtoWriter.bytes(12, Array(repeating: 0, count: long)))
        #expect(Self.parse([key[...]]).refusal == .badProtobuf("field 7 takes more than \(1 << 20) bytes, the most read for one field"))
        // Cut short, it is refused as reading it whole refused it.
        #expect(Self.parse([key.dropLast(10)]).refusal == .badProtobuf("field 7 is longer than what is left"))
    }

    /// 40,000 keys (about 1.5 MB of export.bin, 23 pieces of 64 KiB), stored and deflated: every key
    /// handed on in order, the first before the archive's last bytes were read, the signature
    /// checked over the whole export.bin.
    @Test(arguments: [false, true])
    func manyKeysAreHandedOnAsTheyAreRead(deflated: Bool) throws {
        var f = TestExportFile()
        f.keys = (0..<40_000).map { n in
            TestKey(data: (0..<16).map { UInt8(truncatingIfNeeded: n >> (8 * ($0 % 4))) ^ UInt8($0) }, start: 2_991_456 + Int32(n % 144))
        }
        let zip = f.zip(deflated: deflated)
        #expect(f.exportBin.count > 20 * ZipReader.chunkBytes)
        // Each read of the archive: its last 64 KiB + 22 bytes, its directory, export.bin's local
        // header and its data a piece at a time, then export.sig.
        var reads: [Int] = []
        let reader = try ZipReader(size: zip.count) { (offset, count) throws(ExposureFileError) in
            reads.append(count)
            return Array(zip[offset..<(offset + count)])
        }
        var count = 0
        var inOrder = true
        var readWhenFirst: [Int] = []
        let export = try KeyExport(zip: reader) { key, revised in
            if count == 0 { readWhenFirst = reads }
            guard count < f.keys.count else {
                inOrder = false
                return
            }
            inOrder = inOrder && !revised && key.keyData == f.keys[count].data && key.rollingStartIntervalNumber == UInt32(f.keys[count].start)
            count += 1
        }
        #expect(count == 40_000 && inOrder)
        #expect(export.keyCount == 40_000 && export.revisedKeyCount == 0)
        // The first key came with export.bin's first piece, not after the whole of it.
        let before = readWhenFirst.dropFirst().reduce(0, +)
        #expect(readWhenFirst.count == 4 && before <= ZipReader.chunkBytes + 1000, "reads before the first key: \(readWhenFirst)")
        #expect(reads.count > 20)
        try export.verify(with: KeyExportTests.verificationKeys)
    }

    /// A damaged member is refused for its CRC even when what it holds was refused first, as
    /// reading it whole did; a missing export.sig before a malformed export.bin.
    @Test func zipRefusalsComeFirst() {
        var bad = KeyExport.header
        bad[3] = 0  // a wrong header
        var damaged = ZipWriter.stored([("export.bin", bad), ("export.sig", [])], deflated: true)
        damaged[45] ^= 0xFF  // export.bin's data, after the 5-byte block header: the CRC fails
        #expect(throws: ExposureFileError.badZip("export.bin: CRC-32 mismatch (damaged archive)")) { try ReadExport(zip: damaged) }
        #expect(throws: ExposureFileError.missingMember("export.sig")) { try ReadExport(zip: ZipWriter.stored([("export.bin", bad)])) }
        #expect(throws: ExposureFileError.badHeader) { try ReadExport(exportBin: bad, exportSig: []) }
    }
}
