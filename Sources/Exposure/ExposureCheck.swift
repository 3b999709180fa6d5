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
///
/// Memory: one file at a time, one key at a time. Each file is read by offset and export.bin
/// streamed (``KeyFile``): each key is matched as soon as it is read and dropped, and the
/// signature checked at the file's end over the SHA-256 of the whole export.bin. Across keys and
/// files only each distinct key's 16 bytes and place are kept (``StreamingKeyMatches``, about
/// 20 bytes a hash table slot), with the matches: memory grows with the number of distinct keys by
/// that, and not with a file's size.
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

    /// Checks, without opening them, that every path names a regular file: a missing file, a
    /// directory or a FIFO is refused before the diary is opened.
    public static func checkFiles(_ paths: [String]) throws {
        for path in paths {
            do {
                try KeyFile.check(path)
            } catch {
                throw ExposureCheckError(path: path, problem: error)
            }
        }
    }

    /// Reads and verifies one file, handing each of its keys to `key` as it is read (see
    /// ``KeyExport/init(zip:key:)``: when this throws, what was made of them must be dropped).
    public static func read(_ path: String, options: Options, key: (DiagnosisKey, _ revised: Bool) -> Void) throws -> ExposureReport.File {
        do {
            let export = try KeyFile.read(path, key: key)
            var verified = true
            do {
                try export.verify(with: options.verificationKeys)
            } catch {
                guard options.allowUnverified else { throw error }
                verified = false
            }
            return ExposureReport.File(path: path, region: export.region, keys: export.keyCount, revisedKeys: export.revisedKeyCount, verified: verified)
        } catch let error as ExposureFileError {
            throw ExposureCheckError(path: path, problem: error)
        }
    }

    /// The whole check: the diary's `gaen` visits in `window`, then each file read, verified and
    /// matched in turn. One bad file refuses the whole check.
    public static func run(_ paths: [String], store: DiaryStore, window: VisitWindow, options: Options, now: Double) throws -> (report: ExposureReport, matches: [KeyMatch]) {
        try checkFiles(paths)
        var visits: [Visit] = []
        try store.forEachVisit(in: window) { visit in
            if visit.kind == .gaen, visit.payload.count == 16 { visits.append(visit) }
        }
        var keys = StreamingKeyMatches(matcher: ExposureMatcher(visits: visits))
        var files: [ExposureReport.File] = []
        for path in paths {
            // A file refused (unreadable, malformed, or unverified without --unverified) refuses
            // the whole check: the matches its keys made are dropped with everything else.
            files.append(try read(path, options: options) { key, revised in keys.add(key, revised: revised) })
        }
        let matches = keys.result
        let report = ExposureReport(
            files: files, keys: keys.keyCount, diaryIdentifiers: keys.matcher.identifierCount, matches: matches, risk: options.risk,
            generatedAt: now)
        return (report, matches)
    }
}
