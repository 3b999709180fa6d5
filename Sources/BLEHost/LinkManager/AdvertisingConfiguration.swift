/// What to advertise: legacy advertising parameters, advertising data and scan response.
public struct AdvertisingConfiguration: Hashable, Sendable {
    public var parameters: LESetAdvertisingParameters
    public var data: AdvertisingPayload
    public var scanResponse: AdvertisingPayload

    public init(
        parameters: LESetAdvertisingParameters = LESetAdvertisingParameters(), data: AdvertisingPayload,
        scanResponse: AdvertisingPayload = .empty
    ) {
        self.parameters = parameters
        self.data = data
        self.scanResponse = scanResponse
    }
}
