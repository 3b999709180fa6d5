import ArgumentParser
import BLEHost
import BLETransport
import Foundation

/// `venue-beacon bt …`: Bluetooth diagnostics for installers. Each command opens the controller
/// itself (stop the venue-beacon service first when using the Pi's adapter: the HCI user channel
/// is exclusive).
struct BTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bt",
        abstract: "Bluetooth diagnostics: controller info, scanning, reading a GATT characteristic.",
        discussion: "See docs/bluetooth.md. Stop the venue-beacon service first: the adapter can only be opened once.",
        subcommands: [Info.self, Scan.self, Read.self])

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the controller's address, HCI version, buffer sizes and supported LE states.")

        @OptionGroup var device: BTDeviceOptions

        func run() async throws {
            let info = try await device.withHost(try BTDeviceOptions.configuration()) { host in try await host.controllerInfo() }
            Console.out(BTCommand.report(info))
        }
    }

    static func report(_ info: ControllerInfo) -> String {
        func hex16(_ v: UInt16) -> String { "0x" + Hex.encode([UInt8(v >> 8), UInt8(v & 0xFF)]) }
        func hex64(_ v: UInt64) -> String { "0x" + Hex.encode((0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * (7 - $0))) }) }
        let buffers = "\(info.aclDataLength) bytes × \(info.aclPacketCount)"
        return [
            "address        \(info.address)",
            "HCI version    \(info.bluetoothVersion) (\(info.hciVersion)), revision \(hex16(info.hciRevision))",
            "LMP version    \(info.lmpVersion), subversion \(hex16(info.lmpSubversion))",
            "manufacturer   \(info.manufacturer) (\(hex16(info.manufacturer)))",
            "LE buffers     " + (info.aclBuffersShared ? "shared with ACL: \(buffers)" : buffers),
            "LE features    \(hex64(info.leFeatures.rawValue))",
            "LE states      \(hex64(info.supportedStates))",
        ].joined(separator: "\n")
    }

    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Scan (passive, duplicates not filtered) and print every advertising report.")

        @OptionGroup var device: BTDeviceOptions

        @Option(help: "How long to scan.")
        var seconds: Double = 10

        @Flag(help: "One JSON object per report and line.")
        var json = false

        func validate() throws {
            guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be between 0 and 86400") }
        }

        func run() async throws {
            var configuration = try BTDeviceOptions.configuration()
            configuration.scanning = LESetScanParameters()
            let seconds = self.seconds
            let json = self.json
            let count = try await device.withHost(configuration) { host in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    group.addTask {
                        var count = 0
                        for await event in host.events {
                            guard case .advertisingReport(let report) = event else { continue }
                            count += 1
                            Console.out(json ? ScanLine(report).json : ScanLine(report).text)
                        }
                        return count
                    }
                    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                    host.stop()
                    return try await group.next() ?? 0
                }
            }
            if !json { Console.error("\(count) advertising reports in \(seconds) s") }
        }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect to a peer, find a characteristic and print its value in hex.")

        @OptionGroup var device: BTDeviceOptions

        @Option(help: "The peer's address (AA:BB:CC:DD:EE:FF).")
        var address: String

        @Flag(help: "The peer's address is random (phones use random addresses).")
        var random = false

        @Option(help: "The service UUID (16-bit like FCF6, or 128-bit).")
        var service: String

        @Option(help: "The characteristic UUID.")
        var characteristic: String

        @Option(help: "Give up connecting after this many seconds.")
        var timeout: Double = 10

        func validate() throws {
            guard BluetoothAddress(address) != nil else { throw ValidationError("--address must look like AA:BB:CC:DD:EE:FF") }
            guard BluetoothUUID(service) != nil else { throw ValidationError("--service must be a 16-bit (FCF6) or 128-bit UUID") }
            guard BluetoothUUID(characteristic) != nil else {
                throw ValidationError("--characteristic must be a 16-bit (FCF6) or 128-bit UUID")
            }
            guard timeout > 0, timeout <= 120 else { throw ValidationError("--timeout must be between 0 and 120") }
        }

        func run() async throws {
            guard let peer = BluetoothAddress(address), let service = BluetoothUUID(service),
                let characteristic = BluetoothUUID(characteristic)
            else { throw ValidationError("invalid arguments") }
            let type: AddressType = random ? .random : .public
            let timeout = Duration.milliseconds(Int(self.timeout * 1000))
            let value = try await device.withHost(try BTDeviceOptions.configuration()) { host in
                let link = try await host.connect(to: peer, type: type, timeout: timeout)
                _ = try await host.gatt(.exchangeMTU(), on: link)
                let result = try await host.gatt(.readCharacteristic(characteristic, inService: service), on: link)
                try? await host.disconnect(link)
                guard case .value(let bytes) = result else { throw HostError.unexpectedReply }
                return bytes
            }
            Console.out(Hex.encode(value))
        }
    }
}

/// `--device` and `--btsnoop`, shared by the `bt` commands.
struct BTDeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The controller: hci0, the adapter's address, or unix:/path (btvirt).", valueName: "device"))
    var device: String = "hci0"

    @Option(help: ArgumentHelp("Capture all HCI traffic to this btsnoop file (open with btmon -r or Wireshark).", valueName: "file"))
    var btsnoop: String?

    func validate() throws {
        do {
            _ = try HCITransportSpec(device)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// A host that serves only the GAP and GATT services.
    static func configuration() throws -> HostConfiguration {
        HostConfiguration(database: try GATTDatabase(deviceName: "venue-beacon", services: []))
    }

    /// Runs the host on the device while `body` runs, then stops it. A controller that cannot be
    /// opened fails the command with the transport's message (which says what to do).
    func withHost<T: Sendable>(
        _ configuration: HostConfiguration, _ body: @escaping @Sendable (BluetoothHost) async throws -> T
    ) async throws -> T {
        let spec = try HCITransportSpec(device)
        let host = BluetoothHost(
            device: spec, configuration: configuration, options: .init(retryOpen: false, capturePath: btsnoop))
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    try await host.run()
                    return nil
                }
                group.addTask { try await body(host) }
                var firstError: (any Error)?
                while let next = await group.nextResult() {
                    switch next {
                    case .success(let value?):
                        group.cancelAll()
                        return value
                    case .success(nil):
                        continue
                    case .failure(let error as HCITransportError):
                        // The controller could not be opened: the root cause, whatever else failed.
                        group.cancelAll()
                        throw error
                    case .failure(let error):
                        firstError = firstError ?? error
                        group.cancelAll()
                    }
                }
                throw firstError ?? HostError.notRunning
            }
        } catch let error as HCITransportError {
            Console.error(error.description)
            throw ExitCode(69)  // EX_UNAVAILABLE
        } catch let error as HostError {
            Console.error(error.description)
            throw ExitCode(1)
        }
    }
}

/// One advertising report as an installer reads it, in text or as a JSON line.
struct ScanLine: Encodable {
    var address: String
    var addressType: String
    var eventType: String
    var rssi: Int?
    var flags: String?
    var name: String?
    var serviceUUIDs: [String]
    var serviceData: [String: String]
    var manufacturerData: [String: String]
    var data: String

    init(_ report: LEAdvertisingReport) {
        let ad = report.advertisingData
        address = report.address.description
        addressType = report.addressType.description
        eventType = report.eventType.description
        rssi = report.rssi.map(Int.init)
        flags = ad.flags.map { "0x" + Hex.encode([$0.rawValue]) }
        name = ad.localName?.string
        serviceUUIDs = ad.serviceUUIDs.map(\.description)
        var serviceData: [String: String] = [:]
        for entry in ad.serviceData { serviceData[entry.uuid.description] = Hex.encode(entry.data) }
        self.serviceData = serviceData
        var manufacturerData: [String: String] = [:]
        for entry in ad.manufacturerData {
            manufacturerData[String(format: "%04X", entry.companyID)] = Hex.encode(entry.data)
        }
        self.manufacturerData = manufacturerData
        data = Hex.encode(report.data)
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    var text: String {
        var parts = ["\(address) (\(addressType))", eventType, "rssi " + (rssi.map(String.init) ?? "n/a")]
        if let flags { parts.append("flags \(flags)") }
        if let name { parts.append("name \"\(name)\"") }
        if !serviceUUIDs.isEmpty { parts.append("services " + serviceUUIDs.joined(separator: ",")) }
        for (uuid, value) in serviceData.sorted(by: { $0.key < $1.key }) { parts.append("data[\(uuid)] \(value)") }
        for (company, value) in manufacturerData.sorted(by: { $0.key < $1.key }) { parts.append("mfr[\(company)] \(value)") }
        return parts.joined(separator: "  ")
    }
}
