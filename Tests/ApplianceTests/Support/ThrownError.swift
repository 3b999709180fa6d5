import Testing

/// `#expect(throws: E.self) { … }` that also hands back the error thrown, for checks of what it
/// says. Swift 6.0's swift-testing (trixie's Swift 6.0.3 builds these tests for the Pi) returns
/// nothing from `#expect(throws:)`. As that expectation does, records an issue when nothing or
/// an error of another type is thrown; then returns nil.
func thrownError<E: Error, R>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, performing body: () throws -> R
) -> E? {
    do {
        _ = try body()
        Issue.record("Expected an error of type \(E.self) to be thrown, but none was", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record(error, "Expected an error of type \(E.self) to be thrown, but this was", sourceLocation: sourceLocation)
    }
    return nil
}
