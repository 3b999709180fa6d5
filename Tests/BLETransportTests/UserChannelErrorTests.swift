import BLEHost
import Glibc
import Testing
@testable import BLETransport

@Suite struct UserChannelErrorTests {
    @Test func eachFailureNamesItsCauseAndRemedy() {
        let raw = UserChannelStep.openSocket.error(errno: EPERM, adapter: "")
        #expect(raw == .missingCapability(.netRaw, operation: "open an HCI socket"))
        #expect(raw.description.contains("CAP_NET_RAW"))
        #expect(raw.description.contains("setcap"))
        #expect(raw.description.contains("AmbientCapabilities"))

        let bind = UserChannelStep.bind.error(errno: EPERM, adapter: "hci0")
        #expect(bind == .missingCapability(.netAdmin, operation: "bind the HCI user channel of hci0"))
        #expect(bind.description.contains("CAP_NET_ADMIN"))
        #expect(UserChannelStep.powerDown.error(errno: EACCES, adapter: "hci0").description.contains("CAP_NET_ADMIN"))

        let busy = UserChannelStep.bind.error(errno: EBUSY, adapter: "hci0")
        #expect(busy == .adapterBusy(adapter: "hci0", errno: EBUSY))
        #expect(busy.description.contains("bluetooth.service") || busy.description.contains("systemctl stop bluetooth"))
        #expect(busy.description.contains("systemctl mask bluetooth"))
        #expect(UserChannelStep.bind.error(errno: EUSERS, adapter: "hci0").description.contains("another program"))

        #expect(UserChannelStep.openSocket.error(errno: EAFNOSUPPORT, adapter: "") == .bluetoothUnsupported)
    }

    @Test func noSuchAdapterListsTheOnesThatExist() {
        let present = [
            BluetoothAdapterInfo(index: 0, address: BluetoothAddress(rawValue: 0xB827_EB00_0001), isUp: false),
            BluetoothAdapterInfo(index: 1, address: BluetoothAddress(rawValue: 0x0011_2233_4455), isUp: true),
        ]
        let text = HCITransportError.noSuchAdapter(requested: "hci3", available: present).description
        #expect(text.contains("hci3"))
        #expect(text.contains("hci0 B8:27:EB:00:00:01 (down)"))
        #expect(text.contains("hci1 00:11:22:33:44:55 (up)"))
        #expect(HCITransportError.noSuchAdapter(requested: "hci0", available: []).description.contains("no Bluetooth adapters"))
    }

    /// This machine's kernel has no Bluetooth: opening an adapter must say exactly that.
    @Test func kernelWithoutBluetoothGivesTheClearError() throws {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        let kernelHasBluetooth = probe >= 0 || errno != EAFNOSUPPORT
        if probe >= 0 { close(probe) }
        try #require(!kernelHasBluetooth, "this test checks the error of a kernel without Bluetooth")
        #expect(throws: HCITransportError.bluetoothUnsupported) { try UserChannelTransport(adapter: .index(0)) }
        #expect(throws: HCITransportError.bluetoothUnsupported) { try BluetoothAdapterInfo.all() }
        let spec = try HCITransportSpec("hci0")
        do throws(HCITransportError) {
            _ = try spec.open()
            Issue.record("opened hci0")
        } catch {
            #expect(error.description.contains("no Bluetooth support"))
            #expect(error.description.contains("EAFNOSUPPORT"))
        }
    }

    @Test func unixSocketWithoutServerSaysSo() {
        let path = "/tmp/venue-beacon-no-such-server-\(getpid())"
        #expect(throws: HCITransportError.noServer(path: path, errno: ENOENT)) { try UnixH4Transport(path: path) }
        #expect(HCITransportError.noServer(path: path, errno: ENOENT).description.contains("btvirt -s"))
    }
}
