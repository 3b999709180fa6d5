#if GPIOD_V2
import CGPIOD
import Foundation
import Glibc

/// ``GPIOBackend`` on libgpiod 2.x (2.2 on Raspberry Pi OS / Debian trixie, `libgpiod3`). Built
/// instead of ``GPIOBackendV1`` when the libgpiod found at build time is 2.x (Package.swift);
/// every libgpiod call of such a build is in this file.
///
/// What 2.x changed: a chip is opened by path only (names and labels are ours to resolve), and
/// lines are claimed by line requests built from line settings and a line config, which live on
/// apart from the chip (``ChipV2`` releases them when it closes, as 1.x did).
public struct GPIOBackendV2: GPIOBackend {
    public init() {}

    /// The libgpiod major version this backend is written for.
    public static let majorVersion = 2

    /// The libgpiod the process loaded, e.g. "2.2.1".
    public static var libraryVersion: String { String(cString: gpiod_api_version()) }

    public func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        // A path, a name in /dev or a number, as 1.x's gpiod_chip_open_lookup took them; then a label.
        let path = spec.hasPrefix("/") ? spec : UInt(spec) != nil ? "/dev/gpiochip" + spec : "/dev/" + spec
        errno = 0
        if let chip = gpiod_chip_open(path) { return ChipV2(chip) }
        let code = errno
        if code == EACCES || code == EPERM {
            throw .permissionDenied(device: path, group: deviceGroup(path))
        }
        let available = availableChips()
        if !spec.hasPrefix("/"), let match = available.first(where: { $0.label == spec }),
            let chip = gpiod_chip_open("/dev/" + match.name)
        {
            return ChipV2(chip)
        }
        // A label lookup cannot see chips it may not open: say so rather than "not found".
        if let denied = available.first(where: \.permissionDenied) {
            throw .permissionDenied(device: "/dev/" + denied.name, group: denied.group)
        }
        throw .chipNotFound(spec, available: available)
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
            return ChipV2.info(chip, path: path)
        }
    }
}

final class ChipV2: GPIOChip {
    private let chip: OpaquePointer
    let info: GPIOChipInfo
    /// Every line request made on this chip: in 2.x they outlive the chip unless released.
    private var requests: [RequestV2] = []

    /// The kernel's debounce period for the button (2.x asks the kernel for it; gpiolib debounces
    /// in software where the pin controller cannot). It only spares the panel thread a wake-up per
    /// contact bounce: a press still counts once steady for 50 ms (``ButtonDebouncer``), as with 1.x.
    static let buttonDebounceMicroseconds: UInt = 10_000

    init(_ chip: OpaquePointer) {
        self.chip = chip
        info = Self.info(chip, path: String(cString: gpiod_chip_get_path(chip)))
    }

    static func info(_ chip: OpaquePointer, path: String) -> GPIOChipInfo {
        guard let info = gpiod_chip_get_info(chip) else {
            return GPIOChipInfo(name: (path as NSString).lastPathComponent, label: nil, lines: 0)
        }
        defer { gpiod_chip_info_free(info) }
        let label = String(cString: gpiod_chip_info_get_label(info))
        return GPIOChipInfo(
            name: String(cString: gpiod_chip_info_get_name(info)),
            label: label.isEmpty ? nil : label,
            lines: Int(gpiod_chip_info_get_num_lines(info)))
    }

    private func offset(_ line: GPIOLine) throws(GPIOError) -> UInt32 {
        switch line {
        case .name(let name):
            let offset = gpiod_chip_get_line_offset_from_name(chip, name)
            guard offset >= 0 else { throw .lineNotFound(line, chip: info) }
            return UInt32(offset)
        case .offset(let offset):
            guard offset >= 0, offset < info.lines else { throw .lineNotFound(line, chip: info) }
            return UInt32(offset)
        }
    }

    private func requestFailure(_ line: GPIOLine, _ offset: UInt32) -> GPIOError {
        let code = errno
        if code == EBUSY {
            var consumer: String?
            if let lineInfo = gpiod_chip_get_line_info(chip, offset) {
                consumer = gpiod_line_info_get_consumer(lineInfo).map { String(cString: $0) }
                gpiod_line_info_free(lineInfo)
            }
            return .lineBusy(line, chip: info.name, consumer: consumer)
        }
        return .failed("requesting GPIO line \(line) on \(info.name)", code: code)
    }

    /// Requests one line with the settings `configure` makes.
    private func request(
        _ line: GPIOLine, consumer: String, _ configure: (OpaquePointer) -> Void
    ) throws(GPIOError) -> RequestV2 {
        var offset = try self.offset(line)
        let what = "requesting GPIO line \(line) on \(info.name)"
        guard let settings = gpiod_line_settings_new() else { throw .failed(what, code: ENOMEM) }
        defer { gpiod_line_settings_free(settings) }
        configure(settings)
        guard let lineConfig = gpiod_line_config_new() else { throw .failed(what, code: ENOMEM) }
        defer { gpiod_line_config_free(lineConfig) }
        guard gpiod_line_config_add_line_settings(lineConfig, &offset, 1, settings) == 0 else { throw .failed(what, code: errno) }
        guard let requestConfig = gpiod_request_config_new() else { throw .failed(what, code: ENOMEM) }
        defer { gpiod_request_config_free(requestConfig) }
        gpiod_request_config_set_consumer(requestConfig, consumer)
        errno = 0
        guard let handle = gpiod_chip_request_lines(chip, requestConfig, lineConfig) else { throw requestFailure(line, offset) }
        let request = RequestV2(handle, offset: offset)
        requests.append(request)
        return request
    }

    func requestOutput(_ line: GPIOLine, consumer: String, activeLow: Bool) throws(GPIOError) -> any GPIOOutput {
        let request = try request(line, consumer: consumer) { settings in
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT)
            gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE)
            gpiod_line_settings_set_active_low(settings, activeLow)
        }
        return OutputV2(request, line: line)
    }

    func requestButton(_ line: GPIOLine, consumer: String) throws(GPIOError) -> any GPIOButtonInput {
        guard let events = gpiod_edge_event_buffer_new(ButtonV2.eventCapacity) else {
            throw .failed("requesting GPIO line \(line) on \(info.name)", code: ENOMEM)
        }
        func button(debounce: UInt) throws(GPIOError) -> RequestV2 {
            try request(line, consumer: consumer) { settings in
                gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT)
                gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH)
                gpiod_line_settings_set_bias(settings, GPIOD_LINE_BIAS_PULL_UP)
                gpiod_line_settings_set_active_low(settings, true)
                if debounce > 0 { gpiod_line_settings_set_debounce_period_us(settings, debounce) }
            }
        }
        do throws(GPIOError) {
            let request: RequestV2
            do throws(GPIOError) {
                request = try button(debounce: Self.buttonDebounceMicroseconds)
            } catch .failed {
                // A kernel or pin controller that refuses the debounce period (a busy line or a
                // missing one is not retried): without it; ButtonDebouncer still filters bounces.
                request = try button(debounce: 0)
            }
            return ButtonV2(request, events: events, line: line)
        } catch {
            gpiod_edge_event_buffer_free(events)
            throw error
        }
    }

    func close() {
        for request in requests { request.release() }
        requests.removeAll()
        gpiod_chip_close(chip)
    }
}

/// A line request of one line. Released by its chip's ``ChipV2/close()``; using it after that
/// fails (EBADF) instead of touching freed memory.
final class RequestV2 {
    private(set) var handle: OpaquePointer?
    let offset: UInt32

    init(_ handle: OpaquePointer, offset: UInt32) {
        self.handle = handle
        self.offset = offset
    }

    func release() {
        if let handle { gpiod_line_request_release(handle) }
        handle = nil
    }

    deinit { release() }
}

final class OutputV2: GPIOOutput {
    private let request: RequestV2
    private let line: GPIOLine

    init(_ request: RequestV2, line: GPIOLine) {
        self.request = request
        self.line = line
    }

    func set(_ on: Bool) throws(GPIOError) {
        guard let handle = request.handle else { throw .failed("setting GPIO line \(line)", code: EBADF) }
        let value = on ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE
        guard gpiod_line_request_set_value(handle, request.offset, value) == 0 else {
            throw .failed("setting GPIO line \(line)", code: errno)
        }
    }
}

final class ButtonV2: GPIOButtonInput {
    /// Edge events read per wake-up; more wait for the next one (only the level matters).
    static let eventCapacity = 16

    private let request: RequestV2
    private let events: OpaquePointer
    private let line: GPIOLine

    init(_ request: RequestV2, events: OpaquePointer, line: GPIOLine) {
        self.request = request
        self.events = events
        self.line = line
    }

    deinit { gpiod_edge_event_buffer_free(events) }

    func isPressed() throws(GPIOError) -> Bool {
        guard let handle = request.handle else { throw .failed("reading GPIO line \(line)", code: EBADF) }
        let value = gpiod_line_request_get_value(handle, request.offset)
        guard value != GPIOD_LINE_VALUE_ERROR else { throw .failed("reading GPIO line \(line)", code: errno) }
        return value == GPIOD_LINE_VALUE_ACTIVE
    }

    func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool? {
        guard let handle = request.handle else { throw .failed("waiting for GPIO line \(line)", code: EBADF) }
        let (seconds, attoseconds) = timeout.components
        // In nanoseconds: never negative (that would wait for ever), never overflowing.
        let nanoseconds: Int64 =
            if seconds < 0 { 0 }
            else if seconds >= Int64.max / 1_000_000_000 - 1 { .max }
            else { seconds * 1_000_000_000 + attoseconds / 1_000_000_000 }
        switch gpiod_line_request_wait_edge_events(handle, nanoseconds) {
        case 0: return nil
        case 1:
            guard gpiod_line_request_read_edge_events(handle, events, Self.eventCapacity) >= 0 else {
                throw .failed("reading GPIO line \(line) events", code: errno)
            }
            // The level now, not the edge's: the debouncer wants where the line settled.
            return try isPressed()
        default:
            if errno == EINTR { return nil }
            throw .failed("waiting for GPIO line \(line)", code: errno)
        }
    }
}
#endif
