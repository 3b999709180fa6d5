extension LinkManager {
    /// The radio commands the link manager's machines ask for: each names the step it takes, so
    /// its completion goes back to the machine that asked.
    enum RadioStep: Sendable {
        case setRandomAddress
        case advertisingDisable, advertisingParameters, advertisingData, scanResponseData, advertisingEnable
        case scanDisable, scanParameters, scanEnable
        case createConnection, cancelConnection
    }
}
