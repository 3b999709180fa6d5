import BLEHost

/// The driver's work as host requests, and the host's replies as the driver's input: one
/// mapping for every shell that carries the work (the live service's radio loop and the
/// simulated venue's loop).
extension NodeDriver.HostWork {
    /// The host request that carries this work out.
    public var request: HostRequest {
        switch self {
        case .connect(_, let address, let type, let timeout): return .connect(address, type, timeout: timeout)
        case .gatt(_, let step, let link): return .gatt(step.procedure, link: link.handle)
        case .disconnect(_, let link): return .disconnect(link: link.handle)
        case .probe: return .controllerInfo
        }
    }

    /// What the driver is told when the host answered `result`; nil when there is nothing to
    /// tell (a probe that found the host not running: no sign that its thread turns).
    public func input(for result: Result<HostReply, HostError>) -> NodeDriver.Input? {
        switch self {
        case .connect(let id, _, _, _):
            return .result(id, .connect(result.flatMap { reply in
                if case .link(let link) = reply { return .success(link) }
                return .failure(.unexpectedReply)
            }))
        case .gatt(let id, let step, _):
            return .result(id, .gatt(step, result.flatMap { reply in
                if case .gatt(let value) = reply { return .success(value) }
                return .failure(.unexpectedReply)
            }))
        case .disconnect(let id, _):
            return .result(id, .disconnect(result.map { _ in () }))
        case .probe:
            // Any answer, a failure included, comes from the host's thread: it turns. Only
            // "not running" is said without it (the host has stopped).
            if case .failure(.notRunning) = result { return nil }
            return .probeAnswered
        }
    }
}
