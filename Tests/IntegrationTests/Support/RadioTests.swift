import Testing

/// Every test that uses btvirt is nested in this suite (`extension RadioTests { @Suite struct … }`):
/// btvirt listens on fixed paths, so these tests must never run concurrently.
@Suite(.serialized) struct RadioTests {}
