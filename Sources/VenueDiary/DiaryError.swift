/// Why the diary refused to do something. Each message names the file and says what to do.
public enum DiaryError: Error, Equatable, CustomStringConvertible {
    /// The file exists but is not a venue diary; it was not modified.
    case notADiary(path: String, reason: String)
    /// The diary was written by a newer venue-beacon; it was not modified.
    case newerSchema(path: String, version: Int, supported: Int)
    /// A read-only open of a diary that does not exist.
    case missing(path: String)
    /// A read-only open of a diary that an older build wrote and this build would migrate.
    case needsMigration(path: String, version: Int, current: Int)
    /// SQLite could not open or read the file.
    case unreadable(path: String, reason: String)
    /// `share_days = 0`: the venue shares nothing.
    case sharingDisabled
    /// A setting the diary cannot use (the config file validates first; this is the backstop).
    case invalidSetting(name: String, value: String, allowed: String)
    /// SQLite found the file damaged (a failed `quick_check`, or corruption met while reading):
    /// nothing more is written into it.
    case damaged(path: String, reason: String)
    /// The disk holding the diary is full; what was being written was rolled back.
    case diskFull(path: String)
    /// The diary could not be written or read for an operating-system reason (an I/O error, a
    /// read-only file or file system); what was being written was rolled back.
    case ioFailure(path: String, reason: String)

    public var description: String {
        switch self {
        case let .notADiary(path, reason):
            "\(path) is not a venue diary (\(reason)); refusing to touch it. Point [diary] path at a new file or an existing diary."
        case let .newerSchema(path, version, supported):
            "\(path) is a venue diary written by a newer venue-beacon (schema \(version); this build knows up to \(supported)); refusing to touch it. Upgrade venue-beacon."
        case let .missing(path):
            "no venue diary at \(path)"
        case let .needsMigration(path, version, current):
            "\(path) has diary schema \(version); this build uses \(current) and upgrades it when it opens the diary for writing (start the service or run a replay)."
        case let .unreadable(path, reason):
            "cannot read the venue diary \(path): \(reason)"
        case .sharingDisabled:
            "sharing is disabled (share_days = 0): nothing may be exported"
        case let .invalidSetting(name, value, allowed):
            "invalid \(name) \(value): \(allowed)"
        case let .damaged(path, reason):
            "the venue diary \(path) is damaged (\(reason)); nothing more is written into it. "
                + "Run `venue-beacon diary check` for details, `venue-beacon diary salvage NEW_FILE` to copy every "
                + "readable visit into a new diary, then point [diary] path at NEW_FILE (keep the damaged file for the record)."
        case let .diskFull(path):
            "cannot write the venue diary \(path): the disk is full; nothing was lost from the diary, but nothing new "
                + "is recorded until space is freed (an old export, the outbox, a log)."
        case let .ioFailure(path, reason):
            "cannot use the venue diary \(path): \(reason)"
        }
    }

    /// Whether restarting the service could help: a damaged, foreign or newer file stays so.
    public var isPermanent: Bool {
        switch self {
        case .damaged, .notADiary, .newerSchema: true
        default: false
        }
    }
}
