import Foundation
import Glibc

/// Where the venue's MQTT broker is: `mqtt://host:port` or `mqtts://host:port` (TLS). Without
/// a port, MQTT's: 1883, or 8883 with TLS. Shared by a node's `[replication]` and the hub's `[hub]`.
public struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    /// `mqtts`: TLS, the broker's certificate checked against the venue's CA (`ca_file`).
    public var tls: Bool
    /// A host name or an IP address (an IPv6 address without its brackets).
    public var host: String
    public var port: Int

    public static let defaultPort = 1883
    public static let defaultTLSPort = 8883

    public init(tls: Bool, host: String, port: Int) {
        self.tls = tls
        self.host = host
        self.port = port
    }

    /// Why a broker address is refused.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var text: String
        public var description: String { text }
    }

    static let allowed = "must be mqtt://HOST or mqtts://HOST (TLS), with an optional :PORT (default 1883, or 8883 for mqtts), "
        + "such as \"mqtt://hub.local\" or \"mqtts://192.168.1.10:8883\""

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]`; the problem says what was wrong and what is allowed.
    public static func parse(_ text: String) -> Result<BrokerAddress, Problem> {
        func refuse(_ why: String) -> Result<BrokerAddress, Problem> { .failure(Problem(text: why + "; the broker " + allowed)) }
        let tls: Bool
        let rest: Substring
        let lowered = text.lowercased()
        if lowered.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if lowered.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            return refuse("it is not an mqtt:// or mqtts:// address")
        }
        if rest.contains(where: { "/?#@".contains($0) }) {
            return refuse("it has a path, query or login (the topics are fixed; the login is username and password_file)")
        }
        let host: Substring
        let portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return refuse("the IPv6 address has no closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return refuse("only :PORT may follow the IPv6 address") }
            portText = after.isEmpty ? nil : after.dropFirst()
            let ipv6 = !host.isEmpty && host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
            guard ipv6 else { return refuse("[\(host)] is not an IPv6 address") }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard !host.isEmpty else { return refuse("it has no host") }
            guard isHostName(host) else {
                return refuse("\"\(host)\" is not a host name (letters, digits, - and _, in labels separated by dots) or an IP address")
            }
        }
        var port = tls ? defaultTLSPort : defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 6, portText.allSatisfy(\.isASCIIDigit), let number = Int(portText),
                (1...65535).contains(number)
            else { return refuse("the port must be a whole number from 1 to 65535") }
            port = number
        }
        return .success(BrokerAddress(tls: tls, host: String(host), port: port))
    }

    static func isHostName(_ host: Substring) -> Bool {
        guard host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }

    /// The address as written in a config file, port included.
    public var description: String {
        "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// `[replication]`: this node sends its visits over MQTT to the venue hub (docs/venue.md).
/// Without the section the node keeps its diary to itself.
public struct ReplicationSettings: Sendable, Equatable {
    /// The venue's broker.
    public var broker: BrokerAddress
    /// This room's name, unique in the venue: the topics are `venue-beacon/node/<node>/…`.
    public var node: String
    /// The broker login; by default the node's name (one login per node: the broker's ACL lets
    /// a login publish only under its own name).
    public var username: String
    /// A file whose first line is the broker password; nil: log in without a password.
    public var passwordFile: String?
    /// The PEM file of the CA that signed the broker's certificate (mqtts only).
    public var caFile: String?
    /// Announce the node's sensors to Home Assistant (MQTT discovery).
    public var homeAssistant: Bool

    public init(
        broker: BrokerAddress, node: String, username: String? = nil, passwordFile: String? = nil, caFile: String? = nil,
        homeAssistant: Bool = false
    ) {
        self.broker = broker
        self.node = node
        self.username = username ?? node
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.homeAssistant = homeAssistant
    }

    static let nodeAllowed = "must be this room's name, unique in the venue: 1 to 32 lowercase letters, digits and -, "
        + "starting with a letter or digit, such as \"hall\" or \"room-2\""

    /// Why `name` is not a node name, or nil.
    static func nodeProblem(_ name: String) -> String? {
        guard (1...32).contains(name.unicodeScalars.count), let first = name.unicodeScalars.first, first.isLowercaseLetterOrDigit,
            name.unicodeScalars.allSatisfy({ $0.isLowercaseLetterOrDigit || $0 == "-" })
        else { return nodeAllowed }
        if name == HubSettings.defaultUsername {
            return "\"hub\" is the hub's login at the broker; name this room otherwise (\(nodeAllowed.dropFirst("must be ".count)))"
        }
        return nil
    }

    /// Reads `[replication]`: nil when the section is absent (or wrong: the problems say why).
    static func read(_ section: ConfigSection) -> ReplicationSettings? {
        guard section.isPresent else { return nil }
        var s = section
        let broker = BrokerLogin.broker(&s)
        let node = s.requiredString("node", what: "this room's name, unique in the venue, such as \"hall\"", validate: nodeProblem)
        let login = BrokerLogin.read(&s, broker: broker, defaultUsername: node)
        if login.username == HubSettings.defaultUsername {
            s.report("username", value: TOMLText.quote(HubSettings.defaultUsername), problem: "is the hub's login at the broker; a node logs in with its own name")
        }
        let homeAssistant = s.bool("home_assistant", default: false)
        s.finish()
        guard let broker, let node, let username = login.username, username != HubSettings.defaultUsername else { return nil }
        return ReplicationSettings(
            broker: broker, node: node, username: username, passwordFile: login.passwordFile, caFile: login.caFile,
            homeAssistant: homeAssistant)
    }

    /// Problems with the files it names on this machine (`load`, not `parse`).
    func fileProblems(file: String) -> [ConfigProblem] {
        BrokerLogin.fileProblems(section: "replication", passwordFile: passwordFile, caFile: caFile, file: file)
    }

    /// The broker password: the first line of `password_file`; nil without one. Never log it.
    public func password() throws -> String? { try BrokerLogin.password(passwordFile) }

    /// Worth telling an operator about valid settings.
    var notes: [String] {
        username == node ? [] : [
            "replication.username (\(username)) is not replication.node (\(node)): the shipped broker ACL "
                + "(config/mosquitto/venue-beacon.acl) lets a login publish only under its own name, so this node's visits would be refused"
        ]
    }

    var toml: String {
        tomlSection("replication", [
            ("broker", TOMLText.quote(broker.description), ""),
            ("node", TOMLText.quote(node), ""),
            ("username", TOMLText.quote(username), ""),
        ] + BrokerLogin.tomlEntries(passwordFile: passwordFile, caFile: caFile) + [
            ("home_assistant", String(homeAssistant), ""),
        ])
    }
}

extension Unicode.Scalar {
    fileprivate var isLowercaseLetterOrDigit: Bool { ("a"..."z").contains(self) || ("0"..."9").contains(self) }
}

/// Why reading a broker password file failed. Says which file and why, never its text.
public struct PasswordFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "broker password file \(path): \(problem)" }
}

/// The keys a node's `[replication]` and the hub's `[hub]` share: how to reach and log in to
/// the broker (`broker`, `username`, `password_file`, `ca_file`).
enum BrokerLogin {
    static func broker(_ s: inout ConfigSection) -> BrokerAddress? {
        var address: BrokerAddress?
        _ = s.requiredString("broker", what: "the venue's MQTT broker, such as \"mqtt://hub.local\"") { text in
            switch BrokerAddress.parse(text) {
            case .success(let parsed):
                address = parsed
                return nil
            case .failure(let problem):
                return problem.text
            }
        }
        return address
    }

    static let usernameAllowed = "must be the broker login: 1 to 64 letters, digits, -, _ and . "
        + "(no /, + or #: the broker's ACL puts it in topics)"

    /// `username`, `password_file` and `ca_file`, checked against the broker's scheme.
    static func read(_ s: inout ConfigSection, broker: BrokerAddress?, defaultUsername: String?)
        -> (username: String?, passwordFile: String?, caFile: String?)
    {
        let username = s.string("username", default: defaultUsername) { text in
            (1...64).contains(text.unicodeScalars.count)
                && text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) })
                ? nil : usernameAllowed
        }
        let absolute: (String, String) -> String? = { example, text in
            text.hasPrefix("/") && !text.hasSuffix("/") ? nil : "must be the absolute path of a file, such as \"\(example)\""
        }
        let passwordFile = s.string("password_file", default: nil) { absolute("/etc/venue-beacon/broker.password", $0) }
        var probe = s  // a copy: asking it does not count ca_file twice among the keys
        let caWritten = probe.raw("ca_file") != nil
        let caFile = s.string("ca_file", default: nil) { absolute("/etc/venue-beacon/venue-ca.crt", $0) }
        if let broker {
            if broker.tls && !caWritten {
                s.report(
                    "ca_file", value: nil,
                    problem: "is required for an mqtts:// broker: the PEM file of the CA that signed the broker's certificate")
            } else if !broker.tls, let caFile {
                s.report(
                    "ca_file", value: TOMLText.quote(caFile),
                    problem: "is only for an mqtts:// broker (TLS); \(broker) is plain MQTT: write mqtts://\(broker.host):8883, or leave ca_file out")
            }
        }
        return (username, passwordFile, caFile)
    }

    /// The password file must be a readable regular file that only its owner (root or this
    /// user) can change, as the config; so must the CA file, which decides whom the node trusts.
    static func fileProblems(section: String, passwordFile: String?, caFile: String?, file: String) -> [ConfigProblem] {
        var problems: [ConfigProblem] = []
        for (key, path, what) in [("password_file", passwordFile, "password file"), ("ca_file", caFile, "CA file")] {
            guard let path else { continue }
            func add(_ problem: String) {
                problems.append(ConfigProblem(file: file, key: "\(section).\(key)", value: TOMLText.quote(path), problem: problem))
            }
            var info = stat()
            guard stat(path, &info) == 0 else {
                add(errno == ENOENT ? "no such file: write the \(what) there, or leave \(key) out" : "cannot be reached: \(String(cString: strerror(errno)))")
                continue
            }
            if let kind = Settings.notRegular(info) {
                add("it is \(kind); the \(what) must be a regular file")
            } else if access(path, R_OK) != 0 {
                add("cannot be read by this user: permission denied")
            } else if let problem = TrustedFile.problem(path) {
                add("refusing a \(what) others can change: " + problem)
            }
        }
        return problems
    }

    /// The largest password file read: a password is a line.
    static let maximumPasswordFileBytes = 64 * 1024

    static func password(_ path: String?) throws -> String? {
        guard let path else { return nil }
        func fail(_ problem: String) -> PasswordFileError { PasswordFileError(path: path, problem: problem) }
        var info = stat()
        guard stat(path, &info) == 0 else { throw fail(String(cString: strerror(errno))) }
        if let kind = Settings.notRegular(info) { throw fail("it is \(kind), not a file") }
        guard info.st_size <= maximumPasswordFileBytes else {
            throw fail("it is \(info.st_size) bytes; a password file holds the password on its first line")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw fail(access(path, R_OK) != 0 ? "cannot be read: permission denied" : "cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw fail("it is not UTF-8 text") }
        // Up to the first line break: "\n", "\r\n" (one Character) or "\r".
        let line = text.prefix { !$0.isNewline }
        guard !line.isEmpty else { throw fail("its first line is empty; write the broker password there") }
        return String(line)
    }

    static func tomlEntries(passwordFile: String?, caFile: String?) -> [(String, String?, String)] {
        [
            ("password_file", passwordFile.map(TOMLText.quote), "the broker login has no password"),
            ("ca_file", caFile.map(TOMLText.quote), "plain MQTT (no TLS)"),
        ]
    }
}
