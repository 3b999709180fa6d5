extension LinkManager {
    /// Legacy advertising, as Zephyr's `adv.c`: what the application wants advertised, what the
    /// controller is believed to advertise, and the steps still to do. It returns the next
    /// command (disable → parameters → data → scan response → enable) and learns from each
    /// completion; ``LinkManager`` sends the command and tells it whether peers may connect now.
    struct Advertiser: Sendable {
        /// Steps still to do before advertising may be enabled.
        struct Work: OptionSet, Sendable {
            let rawValue: UInt8
            static let disable = Work(rawValue: 1)
            static let parameters = Work(rawValue: 2)
            static let data = Work(rawValue: 4)
            static let scanResponse = Work(rawValue: 8)
            static let all: Work = [.disable, .parameters, .data, .scanResponse]
        }

        /// What the application wants (nil: no advertising).
        private(set) var desired: AdvertisingConfiguration?
        /// The controller advertises (as far as we know).
        private(set) var isAdvertising = false
        /// The advertising parameters the controller holds (nil: unknown or none).
        private(set) var parametersSet: LESetAdvertisingParameters?
        /// The parameters in the Set Advertising Parameters command in flight.
        private var parametersSent: LESetAdvertisingParameters?
        private var work = Work.all

        /// Wants this advertising (nil: none). False if it is what was wanted already.
        mutating func want(_ advertising: AdvertisingConfiguration?) -> Bool {
            guard advertising != desired else { return false }
            desired = advertising
            if advertising != nil { work = .all }
            return true
        }

        /// The controller forgot everything (reset or closed); what is wanted stays.
        mutating func reset() {
            isAdvertising = false
            parametersSet = nil
            parametersSent = nil
            work = .all
        }

        /// Advertising ended on the controller's side: a central connected to legacy connectable
        /// advertising, or directed advertising timed out.
        mutating func ended() {
            isAdvertising = false
        }

        /// The advertising parameters wanted now (nil: none). While no peer may take a link,
        /// ADV_IND becomes the same advert without connections: ADV_SCAN_IND (ADV_NONCONN_IND when
        /// there is no scan response), so phones keep seeing the venue; directed advertising stops.
        func parameters(acceptsConnections: Bool) -> LESetAdvertisingParameters? {
            guard let desired else { return nil }
            var parameters = desired.parameters
            guard parameters.type.isConnectable, !acceptsConnections else { return parameters }
            guard parameters.type == .connectableUndirected else { return nil }
            parameters.type = desired.scanResponse.bytes.isEmpty ? .nonConnectableUndirected : .scannableUndirected
            // Core 4.x (the Pi 3B's controller is 4.1) allows these two types no interval under 100 ms.
            parameters.intervalMin = max(parameters.intervalMin, 0x00A0)
            parameters.intervalMax = max(parameters.intervalMax, parameters.intervalMin)
            return parameters
        }

        /// A peer could connect to what the controller advertises now.
        var takesConnections: Bool {
            isAdvertising && parametersSet?.type.isConnectable != false
        }

        /// The next command towards what is wanted (nil: nothing to do).
        mutating func nextCommand(acceptsConnections: Bool) -> RadioCommand? {
            guard let desired, let parameters = parameters(acceptsConnections: acceptsConnections) else {
                return isAdvertising ? RadioCommand(LESetAdvertisingEnable(false), .advertisingDisable) : nil
            }
            if parameters != parametersSet, !work.contains(.parameters) {
                // Legacy advertising parameters change only while advertising is disabled.
                work.insert(isAdvertising ? [.disable, .parameters] : .parameters)
            }
            if work.contains(.disable) {
                return RadioCommand(LESetAdvertisingEnable(false), .advertisingDisable)
            } else if work.contains(.parameters) {
                parametersSent = parameters
                return RadioCommand(parameters, .advertisingParameters)
            } else if work.contains(.data) {
                return RadioCommand(LESetAdvertisingData(desired.data), .advertisingData)
            } else if work.contains(.scanResponse) {
                return RadioCommand(LESetScanResponseData(desired.scanResponse), .scanResponseData)
            } else if !isAdvertising {
                return RadioCommand(LESetAdvertisingEnable(true), .advertisingEnable)
            }
            return nil
        }

        /// One of its commands ended with `status`. Returns whether it failed (0x0C on disabling
        /// what is off, or enabling what is on, counts as done).
        mutating func completed(_ step: RadioStep, status: HCIStatus) -> Bool {
            let disallowed = status == .commandDisallowed
            switch step {
            case .advertisingDisable:
                isAdvertising = false
                work.remove(.disable)
                return !status.isSuccess && !disallowed
            case .advertisingParameters, .advertisingData, .scanResponseData:
                if step == .advertisingParameters { parametersSet = status.isSuccess ? parametersSent : nil }
                if status.isSuccess {
                    work.remove(step == .advertisingParameters ? .parameters : step == .advertisingData ? .data : .scanResponse)
                } else {
                    // 0x0C: still advertising; disable and start again.
                    if disallowed { isAdvertising = true }
                    work = .all
                }
                return !status.isSuccess
            case .advertisingEnable:
                if status.isSuccess || disallowed {
                    isAdvertising = true
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
