/// Waits until `condition` holds, looking every 10 ms, for at most `limit`; returns whether it
/// held, looking once more at the end.
///
/// The limit is counted in looks (one per 10 ms), not read off the clock. While the unit suites
/// run, hundreds of tests share the two threads of Swift's cooperative pool, so a task that the
/// condition waits for (a `run()` that starts the recorder's thread, say) may not be scheduled
/// for tens of seconds (44 s seen in CI), and neither is this one: a look that comes late has
/// waited in the same queue, and counts as one. Only a failing test waits the limit out.
func eventually(within limit: Duration = .seconds(30), _ condition: () throws -> Bool) async rethrows -> Bool {
    let step = Duration.milliseconds(10)
    var waited = Duration.zero
    while waited < limit {
        if try condition() { return true }
        try? await Task.sleep(for: step)
        waited += step
    }
    return try condition()
}
