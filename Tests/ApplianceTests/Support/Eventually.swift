/// Waits until `condition` holds, looking every 10 ms, for at most `limit` (generous: these
/// machines are loaded while tests run); returns whether it held.
func eventually(within limit: Duration = .seconds(20), _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}
