// TEMPORARY (not committed): stand-ins until the HCI engineer's link manager and init sequence land.
public struct AdvertisingConfiguration: Sendable {}
public struct ScanConfiguration: Sendable { public init() {} }
public struct ControllerInfo: Sendable { public var report: String { "" } }
