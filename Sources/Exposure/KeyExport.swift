import Crypto
import Foundation

/// Why a key file was refused. Every case says which file and what is wrong with it.
public enum ExposureFileError: Error, Equatable, CustomStringConvertible {
    case unreadable(String)
    /// Not a regular file (a directory, a FIFO, a device, a socket): said as it is, never opened
    /// for reading.
    case notAFile(String)
    case badZip(String)
    case missingMember(String)
    case badHeader
    case badProtobuf(String)
    case badKey(String)
    case unverified(String)

    public var description: String {
        switch self {
        case .unreadable(let why): "cannot be read: \(why)"
        case .notAFile(let what): "is \(what), not a key export file (.zip)"
        case .badZip(let why): "not a readable key export zip: \(why)"
        case .missingMember(let name): "not a key export: the zip has no \(name)"
        case .badHeader: "export.bin does not start with the header \"EK Export v1\" padded to 16 bytes"
        case .badProtobuf(let why): "export.bin is not a valid TemporaryExposureKeyExport: \(why)"
        case .badKey(let why): "export.bin holds an invalid key: \(why)"
        case .unverified(let why): "signature not verified: \(why) (--unverified reads it anyway and says so in the report)"
        }
    }
}

/// The report type of a diagnosis key (export.proto `TemporaryExposureKey.ReportType`).
public enum ReportType: Int, Sendable {
    case unknown = 0, confirmedTest = 1, confirmedClinicalDiagnosis = 2, selfReport = 3, recursive = 4, revoked = 5

    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .confirmedTest: "confirmed_test"
        case .confirmedClinicalDiagnosis: "confirmed_clinical_diagnosis"
        case .selfReport: "self_report"
        case .recursive: "recursive"
        case .revoked: "revoked"
        }
    }
}

/// One diagnosis key (export.proto `TemporaryExposureKey`).
public struct DiagnosisKey: Sendable, Equatable {
    public var keyData: [UInt8]
    public var transmissionRiskLevel: Int?
    public var rollingStartIntervalNumber: UInt32
    /// Intervals of 10 minutes the key was used for, 1–144 (absent in the file: 144).
    public var rollingPeriod: Int
    public var reportType: ReportType?
    public var daysSinceOnsetOfSymptoms: Int?

    public init(
        keyData: [UInt8], transmissionRiskLevel: Int? = nil, rollingStartIntervalNumber: UInt32, rollingPeriod: Int = 144,
        reportType: ReportType? = nil, daysSinceOnsetOfSymptoms: Int? = nil
    ) {
        self.keyData = keyData
        self.transmissionRiskLevel = transmissionRiskLevel
        self.rollingStartIntervalNumber = rollingStartIntervalNumber
        self.rollingPeriod = rollingPeriod
        self.reportType = reportType
        self.daysSinceOnsetOfSymptoms = daysSinceOnsetOfSymptoms
    }
}

/// export.proto `SignatureInfo`: names the public key that verifies the file.
public struct SignatureInfo: Sendable, Equatable {
    public var verificationKeyVersion: String
    public var verificationKeyID: String
    public var signatureAlgorithm: String
}

/// A parsed key export file (`export.bin` and `export.sig` of a zip).
public struct KeyExport: Sendable {
    public static let header: [UInt8] = Array("EK Export v1    ".utf8)

    public var startTimestamp: UInt64?
    public var endTimestamp: UInt64?
    public var region: String
    public var batchNumber: Int
    public var batchSize: Int
    public var signatureInfos: [SignatureInfo]
    public var keys: [DiagnosisKey]
    public var revisedKeys: [DiagnosisKey]
    /// export.bin as read (what the signature covers).
    public var exportBin: [UInt8]
    /// The signatures of export.sig, with what each names.
    public var signatures: [(info: SignatureInfo?, der: [UInt8])]

    /// Reads a zip's `export.bin` and `export.sig`.
    public init(zip bytes: [UInt8]) throws(ExposureFileError) {
        try self.init(zip: try ZipReader(bytes))
    }

    /// Reads `export.bin` and `export.sig` of a zip read through ``ZipReader``.
    public init(zip: ZipReader) throws(ExposureFileError) {
        guard let bin = try zip.read("export.bin") else { throw .missingMember("export.bin") }
        guard let sig = try zip.read("export.sig") else { throw .missingMember("export.sig") }
        try self.init(exportBin: bin, exportSig: sig)
    }

    public init(exportBin: [UInt8], exportSig: [UInt8]) throws(ExposureFileError) {
        guard exportBin.count >= 16, Array(exportBin.prefix(16)) == Self.header else { throw .badHeader }
        self.exportBin = exportBin
        var region = ""
        var batchNumber = 1
        var batchSize = 1
        var infos: [SignatureInfo] = []
        var keys: [DiagnosisKey] = []
        var revised: [DiagnosisKey] = []
        var start: UInt64?
        var end: UInt64?
        do {
            var reader = ProtobufReader(exportBin[16...])
            while let (field, value) = try reader.next() {
                switch field {
                case 1: start = value.uint64
                case 2: end = value.uint64
                case 3: region = value.string ?? ""
                case 4: batchNumber = Int(value.int32 ?? 1)
                case 5: batchSize = Int(value.int32 ?? 1)
                case 6: if let d = value.data { infos.append(try Self.signatureInfo(d)) }
                case 7: if let d = value.data { keys.append(try Self.key(d, index: keys.count, list: "keys")) }
                case 8: if let d = value.data { revised.append(try Self.key(d, index: revised.count, list: "revised_keys")) }
                default: break
                }
            }
        } catch let error as ProtobufReader.Truncated {
            throw .badProtobuf(error.what)
        } catch let error as ExposureFileError {
            throw error
        } catch {
            throw .badProtobuf("\(error)")
        }
        startTimestamp = start
        endTimestamp = end
        self.region = region
        self.batchNumber = batchNumber
        self.batchSize = batchSize
        signatureInfos = infos
        self.keys = keys
        revisedKeys = revised

        var signatures: [(info: SignatureInfo?, der: [UInt8])] = []
        do {
            var reader = ProtobufReader(exportSig[...])
            while let (field, value) = try reader.next() {
                guard field == 1, let d = value.data else { continue }
                var inner = ProtobufReader(d)
                var info: SignatureInfo?
                var der: [UInt8] = []
                while let (f, v) = try inner.next() {
                    if f == 1, let i = v.data { info = try Self.signatureInfo(i) }
                    if f == 4, let s = v.data { der = Array(s) }
                }
                signatures.append((info, der))
            }
        } catch {
            throw .badProtobuf("export.sig is not a valid TEKSignatureList")
        }
        self.signatures = signatures
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

    /// Checks the file's signature against the configured public keys. Throws `.unverified`
    /// naming what failed.
    public func verify(with keys: [VerificationKey]) throws(ExposureFileError) {
        guard !signatures.isEmpty else { throw .unverified("export.sig holds no signature") }
        var problems: [String] = []
        for (info, der) in signatures {
            let id = info?.verificationKeyID ?? ""
            let version = info?.verificationKeyVersion ?? ""
            guard let key = keys.first(where: { $0.id == id && $0.version == version }) else {
                problems.append("no public key configured for verification_key_id \"\(id)\", version \"\(version)\" ([exposure] verification_keys)")
                continue
            }
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: der) else {
                problems.append("the signature for key \"\(id)\" \"\(version)\" is not a DER ECDSA signature")
                continue
            }
            if key.publicKey.isValidSignature(signature, for: exportBin) { return }
            problems.append("the signature does not match export.bin under key \"\(id)\" \"\(version)\" (tampered, or signed by another key)")
        }
        throw .unverified(problems.joined(separator: "; "))
    }
}

/// A health authority's public key, as `[exposure] verification_keys` names it.
public struct VerificationKey {
    public var id: String
    public var version: String
    public var publicKey: P256.Signing.PublicKey

    public init(id: String, version: String, publicKey: P256.Signing.PublicKey) {
        self.id = id
        self.version = version
        self.publicKey = publicKey
    }

    /// `text` is a PEM public key or the base64 of its DER SubjectPublicKeyInfo (what the apps configure).
    public init?(id: String, version: String, text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN"), let key = try? P256.Signing.PublicKey(pemRepresentation: trimmed) {
            self.init(id: id, version: version, publicKey: key)
        } else if let der = Data(base64Encoded: trimmed), let key = try? P256.Signing.PublicKey(derRepresentation: der) {
            self.init(id: id, version: version, publicKey: key)
        } else {
            return nil
        }
    }
}
