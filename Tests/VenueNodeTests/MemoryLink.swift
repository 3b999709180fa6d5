import BLEHost

/// A GATT client and our server connected in memory: every PDU one side sends reaches the other.
struct MemoryLink {
    var client = GATTConnection(link: 1)
    var server = GATTConnection(link: 2)
    var database: GATTDatabase
    let validate: GATTWriteValidator
    let now = ContinuousClock.now
    var serverWrites: [GATTWrite] = []
    /// Writes the validator refused, with the error the peer was answered.
    var refusedWrites: [(write: GATTWrite, error: ATTErrorCode)] = []
    private var clientPDUs: [[UInt8]] = []

    init(database: GATTDatabase, validate: @escaping GATTWriteValidator) {
        self.database = database
        self.validate = validate
    }

    mutating func run(_ procedure: GATTClientProcedure) -> Result<GATTClientResult, GATTClientError>? {
        var (id, actions) = client.start(procedure, now: now)
        var result: Result<GATTClientResult, GATTClientError>?
        while !actions.isEmpty {
            var toClient: [[UInt8]] = []
            for action in actions {
                switch action {
                case .send(let pdu):
                    clientPDUs.append(pdu)
                    for reply in server.receive(pdu[...], database: database, now: now, validateWrite: validate) {
                        switch reply {
                        case .send(let back): toClient.append(back)
                        case .write(let write): serverWrites.append(write)
                        case .writeRefused(let write, let error): refusedWrites.append((write, error))
                        default: break
                        }
                    }
                case .procedureFinished(id, let finished):
                    result = finished
                default:
                    break
                }
            }
            actions = toClient.flatMap { client.receive($0[...], database: database, now: now) }
        }
        return result
    }

    func clientRequests(_ opcode: ATTOpcode) -> Int { clientPDUs.filter { $0.first == opcode.rawValue }.count }
}
