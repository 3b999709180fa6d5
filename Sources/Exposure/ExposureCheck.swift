import Foundation
import VenueDiary

/// A key file that could not be used, named.
public struct ExposureCheckError: Error, CustomStringConvertible {
    public var path: String
    public var problem: ExposureFileError

    public var description: String { "\(path): \(problem)" }
}

/// `venue-beacon exposure check`: key files read and verified, their keys matched against the
/// diary's `gaen` visits in a window. Reads only: the diary and the files are left as they are.
public enum ExposureCheck {
    public struct Options {
        public var verificationKeys: [VerificationKey]
        public var allowUnverified: Bool
        public var risk: RiskConfiguration

        public init(verificationKeys: [VerificationKey], allowUnverified: Bool = false, risk: RiskConfiguration = RiskConfiguration()) {
            self.verificationKeys = verificationKeys
            self.allowUnverified = allowUnverified
            self.risk = risk
        }
    }

    /// Reads and verifies every file first: one bad file refuses the whole check.
    public static func load(_ paths: [String], options: Options) throws -> (files: [ExposureReport.File], keys: DiagnosisKeySet) {
        var files: [ExposureReport.File] = []
        var keys = DiagnosisKeySet()
        for path in paths {
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw ExposureCheckError(path: path, problem: .unreadable((error as NSError).localizedDescription))
            }
            do {
                let export = try KeyExport(zip: bytes)
                var verified = true
                do {
                    try export.verify(with: options.verificationKeys)
                } catch {
                    guard options.allowUnverified else { throw error }
                    verified = false
                }
                keys.add(export)
                files.append(ExposureReport.File(
                    path: path, region: export.region, keys: export.keys.count, revisedKeys: export.revisedKeys.count, verified: verified))
            } catch let error as ExposureFileError {
                throw ExposureCheckError(path: path, problem: error)
            }
        }
        return (files, keys)
    }

    /// The whole check: files, then the diary's `gaen` visits in `window`.
    public static func run(_ paths: [String], store: DiaryStore, window: VisitWindow, options: Options, now: Double) throws -> (report: ExposureReport, matches: [KeyMatch]) {
        try run(loaded: try load(paths, options: options), store: store, window: window, options: options, now: now)
    }

    /// The check on files already loaded with ``load(_:options:)``.
    public static func run(
        loaded: (files: [ExposureReport.File], keys: DiagnosisKeySet), store: DiaryStore, window: VisitWindow, options: Options, now: Double
    ) throws -> (report: ExposureReport, matches: [KeyMatch]) {
        let (files, keys) = loaded
        var visits: [Visit] = []
        try store.forEachVisit(in: window) { visit in
            if visit.kind == .gaen, visit.payload.count == 16 { visits.append(visit) }
        }
        let matcher = ExposureMatcher(visits: visits)
        let matches = matcher.match(keys.keys)
        let report = ExposureReport(
            files: files, keys: keys.keys.count, diaryIdentifiers: matcher.identifierCount, matches: matches, risk: options.risk,
            generatedAt: now)
        return (report, matches)
    }
}
