#if !GPIOD_V2
import CGPIOD
import Foundation
import Glibc

/// ``GPIOBackend`` on libgpiod 1.x (1.6 on Raspberry Pi OS bookworm). Built when the libgpiod
/// found at build time is 1.x (Package.swift); every libgpiod call of such a build is in this file.
public struct GPIOBackendV1: GPIOBackend {
    public init() {}

    /// The libgpiod major version this backend is written for.
    public static let majorVersion = 1

    /// The libgpiod the process loaded, e.g. "1.6.3".
    public static var libraryVersion: String { String(cString: gpiod_version_string()) }

    public func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        errno = 0
        guard let chip = gpiod_chip_open_lookup(spec) else {
            let code = errno
            let available = availableChips()
            if code == EACCES || code == EPERM {
                let device = spec.hasPrefix("/") ? spec : "/dev/" + spec
                throw .permissionDenied(device: device, group: deviceGroup(device))
            }
            // A label lookup cannot see chips it may not open: say so rather than "not found".
            if let denied = available.first(where: \.permissionDenied) {
                throw .permissionDenied(device: "/dev/" + denied.name, group: denied.group)
            }
            throw .chipNotFound(spec, available: available)
        }
        return ChipV1(chip)
    }

    public func availableChips() -> [GPIOChipInfo] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
            .filter { $0.hasPrefix("gpiochip") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        return names.map { name in
            let path = "/dev/" + name
            errno = 0
            guard let chip = gpiod_chip_open(path) else {
                let denied = errno == EACCES || errno == EPERM
                return GPIOChipInfo(name: name, label: nil, lines: 0, permissionDenied: denied, group: deviceGroup(path))
            }
            defer { gpiod_chip_close(chip) }
            return ChipV1.info(chip)
        }
    }
}

final class ChipV1: GPIOChip {
    private let chip: OpaquePointer
    let info: GPIOChipInfo

    init(_ chip: OpaquePointer) {
        self.chip = chip
        info = Self.info(chip)
    }

    static func info(_ chip: OpaquePointer) -> GPIOChipInfo {
        GPIOChipInfo(
            name: String(cString: gpiod_chip_name(chip)),
            label: gpiod_chip_label(chip).map { String(cString: $0) },
            lines: Int(gpiod_chip_num_lines(chip)))
    }

    private func line(_ line: GPIOLine) throws(GPIOError) -> OpaquePointer {
        let found: OpaquePointer?
        switch line {
        case .name(let name): found = gpiod_chip_find_line(chip, name)
        case .offset(let offset): found = offset < info.lines ? gpiod_chip_get_line(chip, UInt32(offset)) : nil
        }
        guard let found else { throw .lineNotFound(line, chip: info) }
        return found
    }

    private func requestFailure(_ line: GPIOLine, _ handle: OpaquePointer) -> GPIOError {
        let code = errno
        if code == EBUSY {
            return .lineBusy(line, chip: info.name, consumer: gpiod_line_consumer(handle).map { String(cString: $0) })
        }
        return .failed("requesting GPIO line \(line) on \(info.name)", code: code)
    }

    func requestOutput(_ line: GPIOLine, consumer: String, activeLow: Bool) throws(GPIOError) -> any GPIOOutput {
        let handle = try self.line(line)
        let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        guard gpiod_line_request_output_flags(handle, consumer, flags, 0) == 0 else { throw requestFailure(line, handle) }
        return OutputV1(handle, line: line)
    }

    func requestButton(_ line: GPIOLine, consumer: String) throws(GPIOError) -> any GPIOButtonInput {
        let handle = try self.line(line)
        let flags = Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW | GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        guard gpiod_line_request_both_edges_events_flags(handle, consumer, flags) == 0 else { throw requestFailure(line, handle) }
        return ButtonV1(handle, line: line)
    }

    func close() { gpiod_chip_close(chip) }
}

final class OutputV1: GPIOOutput {
    private let handle: OpaquePointer
    private let line: GPIOLine

    init(_ handle: OpaquePointer, line: GPIOLine) {
        self.handle = handle
        self.line = line
    }

    func set(_ on: Bool) throws(GPIOError) {
        guard gpiod_line_set_value(handle, on ? 1 : 0) == 0 else { throw .failed("setting GPIO line \(line)", code: errno) }
    }
}

final class ButtonV1: GPIOButtonInput {
    private let handle: OpaquePointer
    private let line: GPIOLine

    init(_ handle: OpaquePointer, line: GPIOLine) {
        self.handle = handle
        self.line = line
    }

    func isPressed() throws(GPIOError) -> Bool {
        let value = gpiod_line_get_value(handle)
        guard value >= 0 else { throw .failed("reading GPIO line \(line)", code: errno) }
        return value == 1
    }

    func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool? {
        let (seconds, attoseconds) = timeout.components
        var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        switch gpiod_line_event_wait(handle, &wait) {
        case 0: return nil
        case 1:
            var event = gpiod_line_event()
            guard gpiod_line_event_read(handle, &event) == 0 else { throw .failed("reading GPIO line \(line) events", code: errno) }
            // The level now, not the edge's: the debouncer wants where the line settled.
            return try isPressed()
        default:
            if errno == EINTR { return nil }
            throw .failed("waiting for GPIO line \(line)", code: errno)
        }
    }
}
#endif
