/// export.bin (the 16-byte header "EK Export v1" and a `TemporaryExposureKeyExport`) read as it
/// comes, in pieces of any size (one byte at a time works): each key (`keys`, field 7) and revised
/// key (`revised_keys`, field 8) is returned as soon as its last byte is fed, in the file's order,
/// and the header fields (any order, anywhere in the message) are kept. No I/O: it is fed bytes.
///
/// Held: the header's fields and, between pieces, the start of one field cut by a piece's end (a
/// key is about 35 bytes; a field this parser needs is refused past ``maximumFieldBytes``). Fields
/// it does not need are skipped as they pass, whatever their length. Refusals are those of reading
/// the message whole: a wrong header, a field that runs past the end (found by ``finish()``), a
/// malformed tag, an invalid key.
struct ExportBinParser {
    /// The most one field this parser keeps (a key, the region, a signature info) may take.
    static let maximumFieldBytes = 1 << 20

    /// A key and whether it came from `revised_keys`.
    typealias Found = (key: DiagnosisKey, revised: Bool)

    private(set) var startTimestamp: UInt64?
    private(set) var endTimestamp: UInt64?
    private(set) var region = ""
    private(set) var batchNumber = 1
    private(set) var batchSize = 1
    private(set) var signatureInfos: [SignatureInfo] = []
    /// The keys and revised keys returned so far.
    private(set) var keyCount = 0
    private(set) var revisedKeyCount = 0

    /// How much of the 16-byte header has been seen.
    private var headerSeen = 0
    /// The start of a field a piece's end cut.
    private var pending: [UInt8] = []
    /// Bytes still to come of a field being skipped, and its number.
    private var skipping = 0
    private var skippedField = 0
    /// Whether the field being skipped is one this parser needs but is longer than it keeps.
    private var skippingOversized = false

    init() {}

    /// Reads the next bytes of export.bin, appending the keys they complete to `found`.
    mutating func feed(_ bytes: ArraySlice<UInt8>, into found: inout [Found]) throws(ExposureFileError) {
        var at = bytes.startIndex
        while headerSeen < 16, at < bytes.endIndex {
            guard bytes[at] == KeyExport.header[headerSeen] else { throw .badHeader }
            headerSeen += 1
            at += 1
        }
        do {
            while at < bytes.endIndex {
                if skipping > 0 {
                    let n = min(skipping, bytes.endIndex - at)
                    skipping -= n
                    at += n
                    if skipping == 0 && skippingOversized {
                        throw ExposureFileError.badProtobuf(
                            "field \(skippedField) takes more than \(Self.maximumFieldBytes) bytes, the most read for one field")
                    }
                } else if pending.isEmpty {
                    let rest = bytes[at...]
                    guard let head = try ProtobufReader.head(rest) else {
                        pending += rest  // a tag or a length cut by the piece's end
                        at = bytes.endIndex
                        continue
                    }
                    if skip(head) { continue }
                    if head.length <= rest.count {
                        if let key = try take(rest.prefix(head.length)) { found.append(key) }
                        at += head.length
                    } else {
                        pending += rest
                        at = bytes.endIndex
                    }
                } else {
                    // A cut field: a byte at a time until its tag (and length) are known, then the
                    // rest of it.
                    if try ProtobufReader.head(pending[...]) == nil {
                        pending.append(bytes[at])
                        at += 1
                    }
                    guard let head = try ProtobufReader.head(pending[...]) else { continue }
                    if skip(head) {
                        skipping -= pending.count
                        pending.removeAll(keepingCapacity: true)
                        continue
                    }
                    let n = min(head.length - pending.count, bytes.endIndex - at)
                    pending += bytes[at..<(at + n)]
                    at += n
                    if pending.count == head.length {
                        if let key = try take(pending[...]) { found.append(key) }
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
        } catch let error as ProtobufReader.Truncated {
            throw .badProtobuf(error.what)
        } catch let error as ExposureFileError {
            throw error
        } catch {
            throw .badProtobuf("\(error)")
        }
    }

    /// Whether the field `head` starts is skipped rather than held: a length-delimited field this
    /// parser does not keep, or one longer than it keeps. If so, starts skipping it (its whole
    /// length; the caller takes off what it has already passed).
    private mutating func skip(_ head: (field: Int, wire: UInt64, length: Int)) -> Bool {
        guard head.wire == 2 else { return false }
        let kept = switch head.field {
        case 3, 6, 7, 8: true
        default: false
        }
        guard !kept || head.length > Self.maximumFieldBytes else { return false }
        // Fields 1, 2, 4 and 5 are numbers: as bytes they are what reading them whole made of them.
        if !kept { _ = try? apply(head.field, .bytes([])) }
        skipping = head.length
        skippedField = head.field
        skippingOversized = kept
        return true
    }

    /// One whole field: the key it holds, if it is one.
    private mutating func take(_ field: ArraySlice<UInt8>) throws -> Found? {
        var reader = ProtobufReader(field)
        guard let (number, value) = try reader.next() else { return nil }
        return try apply(number, value)
    }

    private mutating func apply(_ field: Int, _ value: ProtobufReader.Value) throws -> Found? {
        switch field {
        case 1: startTimestamp = value.uint64
        case 2: endTimestamp = value.uint64
        case 3: region = value.string ?? ""
        case 4: batchNumber = Int(value.int32 ?? 1)
        case 5: batchSize = Int(value.int32 ?? 1)
        case 6: if let d = value.data { signatureInfos.append(try Self.signatureInfo(d)) }
        case 7:
            guard let d = value.data else { return nil }
            defer { keyCount += 1 }
            return (try Self.key(d, index: keyCount, list: "keys"), false)
        case 8:
            guard let d = value.data else { return nil }
            defer { revisedKeyCount += 1 }
            return (try Self.key(d, index: revisedKeyCount, list: "revised_keys"), true)
        default: break
        }
        return nil
    }

    /// Checks that export.bin ended where a message may end: after its header, not inside a field.
    func finish() throws(ExposureFileError) {
        guard headerSeen == 16 else { throw .badHeader }
        if skipping > 0 { throw .badProtobuf("field \(skippedField) is longer than what is left") }
        guard !pending.isEmpty else { return }
        // Read whole, the cut field is refused as reading the whole message refuses it.
        var reader = ProtobufReader(pending[...])
        do {
            _ = try reader.next()
        } catch {
            throw .badProtobuf(error.what)
        }
        throw .badProtobuf("a field runs past the end")
    }

    static func signatureInfo(_ bytes: ArraySlice<UInt8>) throws -> SignatureInfo {
        var reader = ProtobufReader(bytes)
        var info = SignatureInfo(verificationKeyVersion: "", verificationKeyID: "", signatureAlgorithm: "")
        while let (field, value) = try reader.next() {
            switch field {
            case 3: info.verificationKeyVersion = value.string ?? ""
            case 4: info.verificationKeyID = value.string ?? ""
            case 5: info.signatureAlgorithm = value.string ?? ""
            default: break
            }
        }
        return info
    }

    static func key(_ bytes: ArraySlice<UInt8>, index: Int, list: String) throws -> DiagnosisKey {
        var reader = ProtobufReader(bytes)
        var data: [UInt8]?
        var trl: Int?
        var start: Int32?
        var period: Int32 = 144
        var report: ReportType?
        var onset: Int?
        while let (field, value) = try reader.next() {
            switch field {
            case 1: data = value.data.map(Array.init)
            case 2: trl = value.int32.map(Int.init)
            case 3: start = value.int32
            case 4: period = value.int32 ?? 144
            case 5: report = value.int32.flatMap { ReportType(rawValue: Int($0)) } ?? .unknown
            case 6: onset = value.sint32.map(Int.init)
            default: break
            }
        }
        let which = "\(list)[\(index)]"
        guard let data, data.count == 16 else {
            throw ExposureFileError.badKey("\(which): key_data is \(data?.count ?? 0) bytes; a temporary exposure key is 16")
        }
        guard let start, start >= 0 else { throw ExposureFileError.badKey("\(which): rolling_start_interval_number missing or negative") }
        guard (1...144).contains(period) else {
            throw ExposureFileError.badKey("\(which): rolling_period \(period) is out of range (1–144)")
        }
        if let trl, !(0...8).contains(trl) {
            throw ExposureFileError.badKey("\(which): transmission_risk_level \(trl) is out of range (0–8)")
        }
        return DiagnosisKey(
            keyData: data, transmissionRiskLevel: trl, rollingStartIntervalNumber: UInt32(start), rollingPeriod: Int(period),
            reportType: report, daysSinceOnsetOfSymptoms: onset)
    }
}
