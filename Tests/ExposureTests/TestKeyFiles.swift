import Crypto
import Foundation
@testable import Exposure

/// Key export files built and signed here with a test key: the tests need nothing from outside.
/// The protobuf and zip writers below are written for the tests, independent of the readers.
struct TestKey {
    var data: [UInt8]
    var trl: Int? = 6
    var start: Int32
    var period: Int32? = 144
    var reportType: Int? = 1
    var onset: Int? = 0
    /// Raw protobuf bytes appended to the key message (to build invalid keys).
    var extra: [UInt8] = []
}

enum ProtoWriter {
    static func varint(_ value: UInt64) -> [UInt8] {
        var v = value
        var out: [UInt8] = []
        repeat {
            var byte = UInt8(v & 0x7F)
            v >>= 7
            if v != 0 { byte |= 0x80 }
            out.append(byte)
        } while v != 0
        return out
    }

    static func tag(_ field: Int, _ wire: Int) -> [UInt8] { varint(UInt64(field << 3 | wire)) }
    static func int(_ field: Int, _ value: Int64) -> [UInt8] { tag(field, 0) + varint(UInt64(bitPattern: value)) }
    static func sint(_ field: Int, _ value: Int32) -> [UInt8] {
        tag(field, 0) + varint(UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))))
    }
    static func bytes(_ field: Int, _ value: [UInt8]) -> [UInt8] { tag(field, 2) + varint(UInt64(value.count)) + value }
    static func string(_ field: Int, _ value: String) -> [UInt8] { bytes(field, Array(value.utf8)) }
    static func fixed64(_ field: Int, _ value: UInt64) -> [UInt8] {
        tag(field, 1) + (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}

struct TestExportFile {
    nonisolated(unsafe) static let signingKey = P256.Signing.PrivateKey()
    var region = "GB"
    var keyID = "test-id"
    var keyVersion = "v1"
    var keys: [TestKey] = []
    var revisedKeys: [TestKey] = []
    var signer: P256.Signing.PrivateKey = TestExportFile.signingKey

    static func keyMessage(_ k: TestKey) -> [UInt8] {
        var m = ProtoWriter.bytes(1, k.data)
        if let trl = k.trl { m += ProtoWriter.int(2, Int64(trl)) }
        m += ProtoWriter.int(3, Int64(k.start))
        if let p = k.period { m += ProtoWriter.int(4, Int64(p)) }
        if let r = k.reportType { m += ProtoWriter.int(5, Int64(r)) }
        if let o = k.onset { m += ProtoWriter.sint(6, Int32(o)) }
        return m + k.extra
    }

    var signatureInfo: [UInt8] {
        ProtoWriter.string(3, keyVersion) + ProtoWriter.string(4, keyID) + ProtoWriter.string(5, "1.2.840.10045.4.3.2")
    }

    var exportBin: [UInt8] {
        var m = Array("EK Export v1    ".utf8)
        m += ProtoWriter.fixed64(1, 1_795_000_000) + ProtoWriter.fixed64(2, 1_795_086_400)
        m += ProtoWriter.string(3, region) + ProtoWriter.int(4, 1) + ProtoWriter.int(5, 1)
        m += ProtoWriter.bytes(6, signatureInfo)
        for k in keys { m += ProtoWriter.bytes(7, Self.keyMessage(k)) }
        for k in revisedKeys { m += ProtoWriter.bytes(8, Self.keyMessage(k)) }
        return m
    }

    func exportSig(for bin: [UInt8]) -> [UInt8] {
        let signature = try! signer.signature(for: bin).derRepresentation
        let tek = ProtoWriter.bytes(1, signatureInfo) + ProtoWriter.int(2, 1) + ProtoWriter.int(3, 1) + ProtoWriter.bytes(4, Array(signature))
        return ProtoWriter.bytes(1, tek)
    }

    /// The zip (stored members), with `bin` instead of the true export.bin when given (signed
    /// before the change: a tampered file).
    func zip(deflated: Bool = false, tamper: (([UInt8]) -> [UInt8])? = nil) -> [UInt8] {
        let bin = exportBin
        let sig = exportSig(for: bin)
        return ZipWriter.stored([("export.bin", tamper?(bin) ?? bin), ("export.sig", sig)], deflated: deflated)
    }

    /// The public key in the form `[exposure] verification_keys` takes.
    static var publicKeyBase64: String { signingKey.publicKey.derRepresentation.base64EncodedString() }
}

enum ZipWriter {
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// `data` as a deflate stream of stored blocks (type 00: no compression, at most 65,535
    /// bytes a block), which any inflater reads.
    static func deflateStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var at = 0
        repeat {
            let n = min(65_535, data.count - at)
            out.append(at + n == data.count ? 1 : 0)  // BFINAL on the last block, BTYPE 00
            out += le16(n) + le16(n ^ 0xFFFF) + data[at..<(at + n)]
            at += n
        } while at < data.count
        return out
    }

    /// A zip of `members`, stored, or deflated (method 8) in stored blocks.
    static func stored(_ members: [(String, [UInt8])], deflated: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        for (name, data) in members {
            let offset = UInt32(out.count)
            let crc = crc32(data)
            let n = Array(name.utf8)
            let body = deflated ? deflateStored(data) : data
            let common = le16(20) + le16(0) + le16(deflated ? 8 : 0) + le16(0) + le16(0x21) + le32(crc) + le32(UInt32(body.count))
                + le32(UInt32(data.count)) + le16(n.count) + le16(0)
            out += le32(0x0403_4b50) + common + n + body
            central += le32(0x0201_4b50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset) + n
        }
        let start = UInt32(out.count)
        out += central
        out += le32(0x0605_4b50) + le16(0) + le16(0) + le16(members.count) + le16(members.count) + le32(UInt32(central.count)) + le32(start) + le16(0)
        return out
    }
}

func randomKey() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

/// A key export read through, for the tests: what ``KeyExport`` kept (its fields read through
/// this) and every key it handed on.
@dynamicMemberLookup
struct ReadExport {
    var export: KeyExport
    var keys: [DiagnosisKey] = []
    var revisedKeys: [DiagnosisKey] = []

    init(_ zip: ZipReader) throws(ExposureFileError) {
        var keys: [DiagnosisKey] = []
        var revised: [DiagnosisKey] = []
        export = try KeyExport(zip: zip) { key, isRevised in
            if isRevised { revised.append(key) } else { keys.append(key) }
        }
        self.keys = keys
        revisedKeys = revised
    }

    init(zip: [UInt8]) throws(ExposureFileError) { try self.init(try ZipReader(zip)) }

    /// export.bin and export.sig as they are, in a zip.
    init(exportBin: [UInt8], exportSig: [UInt8]) throws(ExposureFileError) {
        try self.init(zip: ZipWriter.stored([("export.bin", exportBin), ("export.sig", exportSig)]))
    }

    subscript<T>(dynamicMember path: KeyPath<KeyExport, T>) -> T { export[keyPath: path] }

    func verify(with keys: [VerificationKey]) throws(ExposureFileError) { try export.verify(with: keys) }
}

/// The diagnosis keys of one or more key files, each key once, held: the rules of
/// ``StreamingKeyMatches`` written plainly, for the tests to hold it to. A key met again (the same
/// 16 bytes) replaces the earlier one only when it comes from `revised_keys`.
struct DiagnosisKeySet {
    private(set) var keys: [DiagnosisKey] = []
    private var index: [RPI: Int] = [:]

    /// A file's keys: its keys, then its revised keys.
    mutating func add(_ export: ReadExport) {
        for key in export.keys { add(key, revised: false) }
        for key in export.revisedKeys { add(key, revised: true) }
    }

    mutating func add(_ key: DiagnosisKey, revised: Bool) {
        let id = RPI(key.keyData)!
        if let at = index[id] {
            if revised { keys[at] = key }
        } else {
            index[id] = keys.count
            keys.append(key)
        }
    }
}
