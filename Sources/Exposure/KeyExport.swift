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

/// A key export file (`export.bin` and `export.sig` of a zip), read through once: export.bin is
/// inflated, hashed and parsed a piece at a time (``ZipReader/stream(_:_:)``,
/// ``ExportBinParser``) and each key handed on as soon as it is read, never held; what is kept is
/// its header's fields, how many keys it held, its SHA-256 (what the signature covers, checked by
/// ``verify(with:)``) and export.sig's signatures.
public struct KeyExport {
    public static let header: [UInt8] = Array("EK Export v1    ".utf8)

    public var startTimestamp: UInt64?
    public var endTimestamp: UInt64?
    public var region: String
    public var batchNumber: Int
    public var batchSize: Int
    public var signatureInfos: [SignatureInfo]
    /// How many keys (`keys`) and revised keys (`revised_keys`) export.bin held.
    public var keyCount: Int
    public var revisedKeyCount: Int
    /// The SHA-256 of export.bin as read (what the signature covers).
    public var digest: SHA256Digest
    /// The signatures of export.sig, with what each names.
    public var signatures: [(info: SignatureInfo?, der: [UInt8])]

    /// Reads a zip's `export.bin` and `export.sig`, handing each key of export.bin to `key` as it is
    /// read, in the file's order, with whether it is a revised key.
    ///
    /// The keys are handed on before the file is known to be whole and signed: when this throws
    /// (a damaged member, a malformed message, an invalid key) or ``verify(with:)`` does, what was
    /// made of them must be dropped. A file's errors come in the order reading it whole gave them:
    /// a member that fails its CRC before a malformed export.bin, a missing export.sig before
    /// either.
    public init(zip: ZipReader, key: (DiagnosisKey, _ revised: Bool) -> Void) throws(ExposureFileError) {
        guard zip.contains("export.bin") else { throw .missingMember("export.bin") }
        var parser = ExportBinParser()
        var hash = SHA256()
        var found: [ExportBinParser.Found] = []
        var refused: ExposureFileError?
        try zip.stream("export.bin") { piece in
            piece.withUnsafeBytes { hash.update(bufferPointer: $0) }
            guard refused == nil else { return }
            do throws(ExposureFileError) {
                try parser.feed(piece, into: &found)
            } catch {
                refused = error
            }
            for (k, revised) in found { key(k, revised) }
            found.removeAll(keepingCapacity: true)
        }
        guard let sig = try zip.read("export.sig") else { throw .missingMember("export.sig") }
        if let refused { throw refused }
        try parser.finish()
        startTimestamp = parser.startTimestamp
        endTimestamp = parser.endTimestamp
        region = parser.region
        batchNumber = parser.batchNumber
        batchSize = parser.batchSize
        signatureInfos = parser.signatureInfos
        keyCount = parser.keyCount
        revisedKeyCount = parser.revisedKeyCount
        digest = hash.finalize()
        signatures = try Self.signatures(sig)
    }

    /// The signatures of export.sig (a `TEKSignatureList`).
    static func signatures(_ exportSig: [UInt8]) throws(ExposureFileError) -> [(info: SignatureInfo?, der: [UInt8])] {
        var signatures: [(info: SignatureInfo?, der: [UInt8])] = []
        do {
            var reader = ProtobufReader(exportSig[...])
            while let (field, value) = try reader.next() {
                guard field == 1, let d = value.data else { continue }
                var inner = ProtobufReader(d)
                var info: SignatureInfo?
                var der: [UInt8] = []
                while let (f, v) = try inner.next() {
                    if f == 1, let i = v.data { info = try ExportBinParser.signatureInfo(i) }
                    if f == 4, let s = v.data { der = Array(s) }
                }
                signatures.append((info, der))
            }
        } catch {
            throw .badProtobuf("export.sig is not a valid TEKSignatureList")
        }
        return signatures
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
            if key.publicKey.isValidSignature(signature, for: digest) { return }
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
