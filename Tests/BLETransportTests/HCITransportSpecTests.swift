import BLEHost
import Testing
@testable import BLETransport

@Suite struct HCITransportSpecTests {
    @Test func acceptsTheThreeForms() throws {
        #expect(try HCITransportSpec("hci0") == .adapter(.index(0)))
        #expect(try HCITransportSpec("hci12") == .adapter(.index(12)))
        #expect(try HCITransportSpec("B8:27:EB:01:02:0a") == .adapter(.address(BluetoothAddress(rawValue: 0xB827_EB01_020A))))
        #expect(try HCITransportSpec("unix:/tmp/bt-server-le") == .unixSocket(path: "/tmp/bt-server-le"))
        #expect(try HCITransportSpec(" hci1 ") == .adapter(.index(1)))
        #expect(try HCITransportSpec("unix:/tmp/bt-server-le").description == "unix:/tmp/bt-server-le")
        #expect(try HCITransportSpec("b8:27:eb:01:02:0a").description == "B8:27:EB:01:02:0A")
    }

    @Test(arguments: ["", "hci", "hcix", "hci-1", "hci65535", "hci99999", "unix:", "B8:27:EB:01:02", "/tmp/bt-server-le", "usb0"])
    func rejectsEverythingElseWithTheFormsInTheMessage(text: String) {
        do {
            _ = try HCITransportSpec(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.text == text)
            #expect(error.description.contains("hci0"))
            #expect(error.description.contains("AA:BB:CC:DD:EE:FF"))
            #expect(error.description.contains("unix:/path"))
        }
    }
}
