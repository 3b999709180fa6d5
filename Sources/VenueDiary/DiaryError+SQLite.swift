import Foundation
import GRDB

extension DiaryError {
    /// What an SQLite failure on the diary at `path` means for its owner, or nil for errors
    /// that are not SQLite's (those pass through unchanged).
    public static func from(_ error: any Error, path: String) -> DiaryError? {
        if let error = error as? DiaryError { return error }
        guard let error = error as? DatabaseError else { return nil }
        let message = error.message ?? "SQLite error \(error.resultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .damaged(path: path, reason: message)
        case .SQLITE_FULL:
            return .diskFull(path: path)
        case .SQLITE_READONLY, .SQLITE_PERM:
            return .ioFailure(
                path: path, reason: "\(message): the file, its directory or its file system is read-only for this user (uid \(geteuid()))")
        case .SQLITE_IOERR, .SQLITE_CANTOPEN:
            return .ioFailure(path: path, reason: "\(message) (an I/O error: check the disk and the kernel log)")
        default:
            return nil
        }
    }
}
