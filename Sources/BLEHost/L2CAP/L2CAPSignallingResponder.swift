/// Answers the LE signalling channel of one link, statelessly.
///
/// - As central, a valid Connection Parameter Update Request is accepted (response 0) and the
///   owner is asked to apply it with LE Connection Update; invalid parameters get response 1.
/// - As peripheral the request is not ours to answer: Command Reject "command not understood".
/// - Any other command gets that Command Reject too, except a Command Reject or a response,
///   which are never answered (no reject loops).
/// - Garbage too short to carry an identifier is dropped.
public enum L2CAPSignallingResponder {
    public struct Response: Hashable, Sendable {
        /// To send on CID 0x0005 of the link, if any.
        public var reply: [UInt8]?
        /// For the owner to send LE Connection Update with these parameters, if set.
        public var connectionUpdate: LEConnectionParameters?
    }

    public static func respond(to payload: ArraySlice<UInt8>, role: LERole) -> Response {
        let signal: L2CAPSignal
        do {
            signal = try L2CAPSignal(decoding: payload)
        } catch {
            // The header may still be readable: reject what has an identifier.
            guard payload.count >= 2 else { return Response() }
            let code = L2CAPSignalCode(rawValue: payload[payload.startIndex])
            if code == .commandReject || code == .connectionParameterUpdateResponse { return Response() }
            return reject(identifier: payload[payload.startIndex + 1])
        }
        switch signal {
        case .connectionParameterUpdateRequest(let identifier, let parameters):
            guard role == .central else { return reject(identifier: identifier) }
            let accepted = parameters.isValid
            let reply = L2CAPSignal.connectionParameterUpdateResponse(identifier: identifier, result: accepted ? 0 : 1)
            return Response(reply: reply.encoded, connectionUpdate: accepted ? parameters : nil)
        case .commandReject, .connectionParameterUpdateResponse:
            return Response()
        case .other(_, let identifier, _):
            return reject(identifier: identifier)
        }
    }

    private static func reject(identifier: UInt8) -> Response {
        Response(reply: L2CAPSignal.commandReject(identifier: identifier, reason: .commandNotUnderstood, data: []).encoded)
    }
}
