import Foundation
import Glibc

/// StrictModes, as sshd has it, for the files that decide what the service runs: the config
/// file (it names `export.sendmail`) and the sendmail program itself, both run or read by root.
/// A file, or a directory on its way from `/`, that another user could change would let that
/// user choose the program root runs. Refused, saying which file and which mode.
enum TrustedFile {
    /// Why `path` cannot be trusted, or nil. `program`: it must also be an executable regular file.
    static func problem(_ path: String, program: Bool = false) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? "\(path) does not exist" : "\(path) cannot be reached: \(String(cString: strerror(errno)))"
        }
        if program {
            guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
            guard access(path, X_OK) == 0 else { return "\(path) is not executable" }
        }
        // The path as given (a link's directory could swap the link) and the file it names.
        var places = directories(of: path)
        if let real = realpath(path, nil) {
            let resolved = String(cString: real)
            free(real)
            if resolved != path {
                if let problem = ownProblem(resolved) { return problem }
                places += directories(of: resolved)
            }
        }
        if let problem = ownProblem(path) { return problem }
        for directory in places {
            if let problem = ownProblem(directory, directory: true) { return problem }
        }
        return nil
    }

    /// The directories from `path`'s parent up to `/`.
    private static func directories(of path: String) -> [String] {
        var result: [String] = []
        var current = FileIdentity.split(path).directory
        while true {
            result.append(current)
            if current == "/" || current == "." { return result }
            current = FileIdentity.split(current).directory
        }
    }

    /// A file or directory another user could change: owned by someone other than root or us,
    /// or writable by its group or others (a sticky directory such as /tmp is fine: only an
    /// entry's owner may replace it).
    private static func ownProblem(_ path: String, directory: Bool = false) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = String(info.st_mode & 0o7777, radix: 8)
        if info.st_uid != 0 && info.st_uid != geteuid() {
            let owner = getpwuid(info.st_uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(info.st_uid)"
            return "\(path) belongs to \(owner), who could change what runs as this user (\(userName())); it must belong to root or \(userName())"
        }
        let writable = info.st_mode & 0o022
        if writable != 0 && !(directory && info.st_mode & S_ISVTX != 0) {
            let who = writable == 0o022 ? "its group and others" : writable == 0o020 ? "its group" : "others"
            return "\(path) is writable by \(who) (mode 0\(mode)), who could change what runs as \(userName()): chmod go-w \(path)"
        }
        return nil
    }

    private static func userName() -> String {
        getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(geteuid())"
    }
}
