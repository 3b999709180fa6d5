import BLEHost
import BLETransport
import Foundation
import Herald
import Logging
import VenueNode

/// The loop that handles Bluetooth: it owns the node (through ``NodeDriver``), takes the host's
/// events, a one-second tick and the results of its requests from one ``NodeInbox``, starts each
/// request as a child task, hands sensor events to the ``Recorder``, and tells the hooks how the
/// radio is doing. The watchdog hook is pinged from its tick, so a stalled loop stops the pings.
/// With opening hours it switches advertising and scanning off while the venue is closed (at
/// start, and within a second of closing time, when open visits are closed at their last
/// sighting) and on again when it opens.
struct NodeRadio: Sendable {
    let host: BluetoothHost
    let driver: NodeDriver
    let gate: SignalWriteGate
    let recorder: Recorder
    let hooks: ServiceHooks
    let clock: NodeClock
    let logger: Logger
    let venueName: String
    let schedule: Schedule?
    /// Whether the host was started with the radio switched on (open, or no schedule).
    let openAtStart: Bool

    /// Runs until cancelled or until the host stops.
    func run() async {
        let inbox = NodeInbox()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in host.events { inbox.push(.host(event)) }
                inbox.finish()
            }
            group.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil { inbox.push(.tick(rejectedWrites: gate.rejected)) }
            }
            await withTaskCancellationHandler {
                var driver = driver
                var output = NodeDriver.Output()
                var status = ""
                var droppedReported = 0
                var limitedReported = (count: 0, at: -Double.infinity)
                var announcer = RadioAnnouncer()
                var stallReported = false
                var open = openAtStart
                var readySent = false
                if let schedule, !open {
                    logger.info("opening hours: closed\(Self.until(schedule, clock)); not advertising or scanning")
                }
                while let batch = await inbox.next() {
                    for input in batch {
                        driver.handle(input, now: clock.monotonic(), into: &output)
                        // Closed at start: the service is ready once the controller is.
                        if case .host(.state(.ready)) = input, !open, !readySent {
                            readySent = true
                            hooks.ready()
                        }
                        guard case .tick = input else { continue }
                        if let schedule, schedule.isOpen(at: Date(timeIntervalSince1970: clock.wall())) != open {
                            open.toggle()
                            if open {
                                logger.info("opening hours: open\(Self.until(schedule, clock)); advertising and scanning")
                            } else {
                                logger.info("opening hours: closed\(Self.until(schedule, clock)); advertising and scanning stop, open visits close at their last sighting")
                                recorder.checkOutAll()
                            }
                            let on = open
                            group.addTask { await switchRadio(on: on) }
                        }
                        if driver.hostResponsive(now: clock.monotonic()) {
                            if stallReported {
                                logger.notice("Bluetooth: the host answers again")
                                stallReported = false
                            }
                            hooks.watchdog()
                        } else if !stallReported {
                            logger.error("Bluetooth: the host has not answered for \(Int(NodeDriver.stallLimit)) s; the watchdog is no longer fed")
                            stallReported = true
                        }
                        // While closed the radio is off on purpose: no "pause lasting" notice.
                        if let lasting = announcer.tick(now: clock.monotonic()), open { logger.notice("Bluetooth: \(lasting)") }
                        let line = (open ? "" : "closed (opening hours); ") + statusLine(driver)
                        if line != status {
                            status = line
                            hooks.status(line)
                        }
                        // Advertising reports are the only events dropped on the way in, by
                        // the host's queue or the inbox; both count them.
                        let dropped = inbox.dropped + host.events.droppedCounts.values.reduce(0, +)
                        if dropped > droppedReported {
                            logger.warning("the node fell behind: \(dropped - droppedReported) advertising reports dropped")
                            droppedReported = dropped
                        }
                        // Signal writes refused for coming too fast: a notice at most once a minute.
                        let limited = gate.rateLimited
                        if limited > limitedReported.count, clock.monotonic() - limitedReported.at >= 60 {
                            logger.notice("Bluetooth: \(limited - limitedReported.count) signal writes refused for coming too fast (over 4 a second from one link)")
                            limitedReported = (limited, clock.monotonic())
                        }
                    }
                    recorder.submit(output.events)
                    for work in output.work {
                        group.addTask {
                            if let input = await perform(work) { inbox.push(input) }
                        }
                    }
                    for note in output.notes {
                        if case .ready = note {
                            if readySent { continue }
                            readySent = true
                        }
                        report(note, &announcer)
                    }
                    output.removeAll()
                }
            } onCancel: {
                inbox.finish()
            }
            group.cancelAll()
        }
    }

    private func perform(_ work: NodeDriver.HostWork) async -> NodeDriver.Input? {
        do {
            return work.input(for: .success(try await host.perform(work.request)))
        } catch {
            return work.input(for: .failure(error))
        }
    }

    private func report(_ note: NodeDriver.Note, _ announcer: inout RadioAnnouncer) {
        switch note {
        case .radio(let condition):
            switch announcer.change(to: condition, now: clock.monotonic()) {
            case .info: logger.info("Bluetooth: \(describe(condition))")
            case .warning: logger.warning("Bluetooth: \(describe(condition))")
            case .debug: logger.debug("Bluetooth: \(describe(condition))")
            }
            hooks.radio(condition)
        case .ready:
            hooks.ready()
        case .immediateData(let target, let bytes):
            logger.debug("\(target) sent \(bytes) bytes of immediate data (not stored)")
        }
    }

    /// Opening hours: advertising and scanning on or off (they stay so if the controller is reopened).
    private func switchRadio(on: Bool) async {
        do {
            try await host.setRadio(advertising: on, scanning: on)
        } catch {
            logger.warning("Bluetooth: cannot switch advertising and scanning \(on ? "on" : "off"): \(error)")
        }
    }

    /// " until <local time>" of the next opening-hours change, if there is one this week.
    private static func until(_ schedule: Schedule, _ clock: NodeClock) -> String {
        guard let change = schedule.nextChange(after: Date(timeIntervalSince1970: clock.wall())) else { return "" }
        let format = DateFormatter()
        format.timeZone = schedule.timeZone
        format.dateFormat = "EEE HH:mm"
        return " until \(format.string(from: change))"
    }

    private func describe(_ condition: RadioCondition) -> String {
        switch condition {
        case .starting: return "opening \(host.device)"
        case .running: return "advertising \"\(venueName)\" and scanning on \(host.device)"
        case .partial: return condition.description
        case .unavailable(let reason): return "unavailable: \(reason); retrying with backoff"
        }
    }

    private func statusLine(_ driver: NodeDriver) -> String {
        let present = recorder.present
        return "\(driver.condition); \(present) \(present == 1 ? "phone" : "phones") present; "
            + "\(driver.node.targetCount) devices followed; \(driver.linkCount) \(driver.linkCount == 1 ? "link" : "links")"
    }
}
