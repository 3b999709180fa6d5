extension LinkManager {
    /// Scanning, as Zephyr's `scan.c`: what the application wants, whether the controller scans,
    /// and the steps still to do. It returns the next command (disable → parameters → enable,
    /// duplicate filtering off) and learns from each completion. Scanning is re-asserted (all
    /// three steps again) after every link change, attempt and health probe, as some controllers
    /// stop it silently.
    struct Scanner: Sendable {
        /// Steps still to do before scanning may be enabled.
        struct Work: OptionSet, Sendable {
            let rawValue: UInt8
            static let disable = Work(rawValue: 1)
            static let parameters = Work(rawValue: 2)
            static let all: Work = [.disable, .parameters]
        }

        /// What the application wants (nil: no scanning).
        private(set) var desired: LESetScanParameters?
        /// The controller scans (as far as we know).
        private(set) var isScanning = false
        private var work = Work.all

        /// Wants these parameters (nil: no scanning). False if they were wanted already.
        mutating func want(_ parameters: LESetScanParameters?) -> Bool {
            guard parameters != desired else { return false }
            desired = parameters
            if parameters != nil { work = .all }
            return true
        }

        /// Goes through disable → parameters → enable again, if scanning is wanted.
        mutating func reassert() {
            if desired != nil { work = .all }
        }

        /// The controller forgot everything (reset or closed); what is wanted stays.
        mutating func reset() {
            isScanning = false
            work = .all
        }

        /// The next command towards what is wanted (nil: nothing to do). `allowed`: scanning may
        /// run now (no attempt needs it off).
        mutating func nextCommand(allowed: Bool) -> RadioCommand? {
            guard let parameters = desired, allowed else {
                return isScanning ? Self.disable : nil
            }
            if work.contains(.disable) {
                return Self.disable
            } else if work.contains(.parameters) {
                return RadioCommand(parameters, .scanParameters)
            } else if !isScanning {
                return RadioCommand(LESetScanEnable(true, filterDuplicates: false), .scanEnable)
            }
            return nil
        }

        /// Stops scanning (also what an attempt that needs scanning off asks for).
        static var disable: RadioCommand { RadioCommand(LESetScanEnable(false), .scanDisable) }

        /// One of its commands ended with `status`. Returns whether it failed (0x0C on disabling
        /// what is off, or enabling what is on, counts as done).
        mutating func completed(_ step: RadioStep, status: HCIStatus) -> Bool {
            let disallowed = status == .commandDisallowed
            switch step {
            case .scanDisable:
                isScanning = false
                work.remove(.disable)
                return !status.isSuccess && !disallowed
            case .scanParameters:
                if status.isSuccess {
                    work.remove(.parameters)
                } else {
                    // 0x0C: still scanning; disable and start again.
                    if disallowed { isScanning = true }
                    work = .all
                }
                return !status.isSuccess
            case .scanEnable:
                if status.isSuccess || disallowed {
                    isScanning = true
                    return false
                }
                work = .all
                return true
            default:
                return !status.isSuccess
            }
        }
    }
}
