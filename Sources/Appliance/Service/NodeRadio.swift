import BLEHost
import BLETransport
import Foundation
import Logging
import VenueNode

/// The shell around the node's radio loop (``NodeLoop``): it takes the host's events, a
/// one-second tick and the replies to the loop's requests from one ``NodeInbox``, feeds them to
/// the loop with the steady time, starts each request the loop asks for as a child task, hands
/// sensor events to the ``Recorder``, and carries the loop's notices to the log and the hooks
/// (LEDs, systemd readiness, status and watchdog). What to do — opening hours, the watchdog,
/// what is logged — the loop decides; the simulated venue runs the same loop.
struct NodeRadio: Sendable {
    let host: BluetoothHost
    let loop: NodeLoop
    let recorder: Recorder
    let hooks: ServiceHooks
    let clock: NodeClock
    let logger: Logger

    /// Runs until cancelled or until the host stops.
    func run() async {
        let inbox = NodeInbox()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in host.events { inbox.push(.host(event)) }
                inbox.finish()
            }
            group.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil {
                    // Advertising reports are the only events dropped on the way in, by the
                    // host's queue or the inbox; both count them.
                    let dropped = inbox.dropped + host.events.droppedCounts.values.reduce(0, +)
                    inbox.push(.tick(NodeLoop.Tick(wall: clock.wall(), presentPhones: recorder.present, droppedReports: dropped)))
                }
            }
            await withTaskCancellationHandler {
                var loop = loop
                var output = NodeLoop.Output()
                loop.start(into: &output)
                while true {
                    recorder.submit(output.events)
                    for (id, request) in output.requests {
                        group.addTask { inbox.push(.reply(id, await perform(request))) }
                    }
                    for notice in output.notices { carry(notice) }
                    output.removeAll()
                    guard let batch = await inbox.next() else { break }
                    for input in batch { loop.handle(input, now: clock.monotonic(), into: &output) }
                }
            } onCancel: {
                inbox.finish()
            }
            group.cancelAll()
        }
    }

    private func perform(_ request: HostRequest) async -> Result<HostReply, HostError> {
        do {
            return .success(try await host.perform(request))
        } catch {
            return .failure(error)
        }
    }

    private func carry(_ notice: NodeLoop.Notice) {
        switch notice {
        case .log(let line): logger.log(line)
        case .radio(let condition): hooks.radio(condition)
        case .ready: hooks.ready()
        case .status(let line): hooks.status(line)
        case .watchdog: hooks.watchdog()
        case .checkOutAll: recorder.checkOutAll()
        }
    }
}
