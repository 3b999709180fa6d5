import BLEHost

/// Where the controller is, as written on the command line or in the config file:
/// `hci0` (an adapter by index), `AA:BB:CC:DD:EE:FF` (an adapter by address, survives
/// renumbering) or `unix:/path` (H4 over a unix stream socket, e.g. `btvirt -s`).
public enum HCITransportSpec: Sendable, Hashable, CustomStringConvertible {
    case adapter(UserChannelTransport.Adapter)
    case unixSocket(path: String)

    public init(_ text: String) throws(HCITransportSpecError) {
        let trimmed = text.trimmingSpaces
        if trimmed.hasPrefix("unix:") {
            let path = String(trimmed.dropFirst("unix:".count))
            guard !path.isEmpty else { throw HCITransportSpecError(text: text, reason: "unix: needs a socket path") }
            self = .unixSocket(path: path)
        } else if trimmed.hasPrefix("hci") {
            let digits = trimmed.dropFirst(3)
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let index = UInt16(digits), index < 0xFFFF
            else { throw HCITransportSpecError(text: text, reason: "an adapter name is hci and a number") }
            self = .adapter(.index(index))
        } else if let address = BluetoothAddress(trimmed) {
            self = .adapter(.address(address))
        } else {
            throw HCITransportSpecError(text: text, reason: nil)
        }
    }

    public var description: String {
        switch self {
        case .adapter(let a): return a.description
        case .unixSocket(let path): return "unix:" + path
        }
    }

    /// Opens the transport, wrapped in a btsnoop capture to `capturePath` when given. Blocking (a
    /// user channel may retry for about a second): call it from the transport owner's thread.
    public func open(capturePath: String? = nil) throws(HCITransportError) -> any HCITransport {
        let transport: any HCITransport
        switch self {
        case .adapter(let adapter): transport = try UserChannelTransport(adapter: adapter)
        case .unixSocket(let path): transport = try UnixH4Transport(path: path)
        }
        guard let capturePath else { return transport }
        do {
            return CapturingTransport(base: transport, sink: try BTSnoopFileSink(path: capturePath))
        } catch {
            transport.close()
            throw error
        }
    }
}

/// A transport spec that is none of the accepted forms.
public struct HCITransportSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String?

    public var description: String {
        let forms =
            "use hciN for an adapter (e.g. hci0), the adapter's address (AA:BB:CC:DD:EE:FF), "
            + "or unix:/path for H4 over a unix socket (e.g. unix:/tmp/bt-server-le from `btvirt -s`)"
        return "invalid Bluetooth device '\(text)'" + (reason.map { " (\($0))" } ?? "") + ": " + forms
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
