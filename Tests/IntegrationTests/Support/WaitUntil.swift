/// Waits until `condition` holds, looking every 20 ms, and throws if it has not within `limit`
/// (counted in looks, not read off the clock: a busy machine makes looks late, not fewer).
func waitUntil(
    _ what: String = "the condition", within limit: Duration = .seconds(90), _ condition: () throws -> Bool
) async throws {
    let step = Duration.milliseconds(20)
    var waited = Duration.zero
    while waited < limit {
        if try condition() { return }
        try await Task.sleep(for: step)
        waited += step
    }
    if try condition() { return }
    throw ChildProcess.Failure(description: "\(what) did not happen within \(limit)")
}
