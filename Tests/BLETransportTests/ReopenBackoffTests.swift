import BLEHost
import Testing
@testable import BLETransport

@Suite struct ReopenBackoffTests {
    @Test func doublesToTheMaximumAndResetsAfterAStableSession() {
        var b = ReopenBackoff(initial: .seconds(1), maximum: .seconds(5), stableAfter: .seconds(60))
        #expect(b.delay(afterSessionLasting: nil) == .seconds(1))
        #expect(b.delay(afterSessionLasting: nil) == .seconds(2))
        #expect(b.delay(afterSessionLasting: .seconds(10)) == .seconds(4))
        #expect(b.delay(afterSessionLasting: nil) == .seconds(5))
        #expect(b.delay(afterSessionLasting: nil) == .seconds(5))
        #expect(b.delay(afterSessionLasting: .seconds(60)) == .seconds(1))
        #expect(b.delay(afterSessionLasting: .seconds(1)) == .seconds(2))
    }
}
