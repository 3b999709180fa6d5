"""Bumble peer: a phone running Herald, as the venue node sees one.

usage: herald_phone.py TRANSPORT KIND PAYLOAD_HEX SECONDS [key=value ...]
KIND:
  android  advert: flags, 16-bit service FCF6, manufacturer 0x05F1 with a 6-byte pseudo device
           address; GATT: service FCF6 with the Android signal characteristic (write) and the
           payload characteristic (read)
  iphone   advert: flags, service FCF6, Apple manufacturer data (a phone in the foreground);
           GATT: service FCF6 with the iOS signal characteristic (write, notify) and the payload
  gaen     non-connectable advert: flags, service FD6F, service data FD6F = PAYLOAD (16-byte
           rolling proximity identifier) + 4 bytes of metadata
options:
  pseudo=HEX12     the pseudo device address (android; default 0a0b0c0d0e0f)
  every=SECONDS    re-enable advertising this often (btvirt reports an advert only on enable;
                   default 1)
  rotate=SECONDS   take a new random address this often (default never)
  address=ADDR     the first random address (default C0:00:00:00:00:01; the top bits must be 11)
  att=silent       a stalled (or hostile) phone: never answer an ATT request, not even the
                   MTU exchange; prints "ATT-IGNORED <opcode>" for each
Prints "READY <address>" once advertising, "ADDRESS <address>" after each rotation, "CONNECTED",
"READ" when the payload is read, "WRITE <hex>" for each signal write, "DISCONNECTED after
<seconds> s" (how long the link lasted).
"""
import asyncio
import sys
import time

from bumble import att, hci
from bumble.device import AdvertisingType, Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = "FCF6"
ANDROID_SIGNAL = "f617b813-092e-437a-8324-e09a80821a11"
IOS_SIGNAL = "0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363"
PAYLOAD = "3e98c0f8-8f05-4829-a121-43e38f8933e7"


def advert(kind: str, payload: bytes, pseudo: bytes) -> bytes:
    flags = bytes([0x02, 0x01, 0x06])
    if kind == "android":
        return flags + bytes([0x03, 0x03, 0xF6, 0xFC, 0x09, 0xFF, 0xF1, 0x05]) + pseudo
    if kind == "iphone":
        # Apple manufacturer data: the overflow area (type 0x01) with a bit set, which Herald's
        # device filter does not match (it drops only an empty overflow area).
        apple = bytes([0x4C, 0x00, 0x01]) + bytes(8) + bytes([0x80]) + bytes(7)
        return flags + bytes([0x03, 0x03, 0xF6, 0xFC, len(apple) + 1, 0xFF]) + apple
    data = bytes([0x6F, 0xFD]) + payload + bytes([0x40, 0x08, 0x00, 0x00])
    return flags + bytes([0x03, 0x03, 0x6F, 0xFD, len(data) + 1, 0x16]) + data


async def main() -> None:
    transport_name, kind, payload_hex, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    options = dict(arg.split("=", 1) for arg in sys.argv[5:])
    payload = bytes.fromhex(payload_hex)
    pseudo = bytes.fromhex(options.get("pseudo", "0a0b0c0d0e0f"))
    every = float(options.get("every", "1"))
    rotate = float(options["rotate"]) if "rotate" in options else None
    address = Address(options.get("address", "C0:00:00:00:00:01"), Address.RANDOM_DEVICE_ADDRESS)

    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("herald-phone", address, source, sink)
        if kind in ("android", "iphone"):
            def on_read(connection):
                print("READ", flush=True)
                return payload

            def on_write(connection, value) -> None:
                print("WRITE", bytes(value).hex(), flush=True)

            signal = IOS_SIGNAL if kind == "iphone" else ANDROID_SIGNAL
            properties = Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE
            if kind == "iphone":
                properties |= Characteristic.Properties.NOTIFY
            device.add_service(Service(HERALD_SERVICE, [
                Characteristic(signal, properties, Characteristic.WRITEABLE, CharacteristicValue(write=on_write)),
                Characteristic(PAYLOAD, Characteristic.Properties.READ, Characteristic.READABLE,
                               CharacteristicValue(read=on_read)),
            ]))
        def on_connection(connection) -> None:
            opened = time.monotonic()
            print("CONNECTED", flush=True)
            connection.on("disconnection", lambda reason: print(
                f"DISCONNECTED after {time.monotonic() - opened:.1f} s", flush=True))

        device.on("connection", on_connection)
        if options.get("att") == "silent":
            device.l2cap_channel_manager.register_fixed_channel(
                att.ATT_CID, lambda connection, pdu: print(f"ATT-IGNORED {bytes(pdu)[:1].hex()}", flush=True))
        await device.power_on()
        advertising_type = (AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE if kind != "gaen"
                            else AdvertisingType.UNDIRECTED)
        data = advert(kind, payload, pseudo)

        async def advertise() -> None:
            try:
                await device.start_advertising(advertising_type=advertising_type, advertising_data=data,
                                               own_address_type=hci.OwnAddressType.RANDOM)
            except Exception as error:  # e.g. while connected: try again at the next round
                print("ADVERTISE-FAILED", error, flush=True)

        await advertise()
        print("READY", str(device.random_address).split("/")[0], flush=True)
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        next_rotation = loop.time() + rotate if rotate else None
        counter = 1
        while loop.time() < end:
            await asyncio.sleep(every)
            await device.stop_advertising()
            if next_rotation and loop.time() >= next_rotation:
                counter += 1
                new = Address(f"C0:00:00:00:{counter >> 8:02X}:{counter & 0xFF:02X}", Address.RANDOM_DEVICE_ADDRESS)
                await device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=new))
                device.random_address = new
                print("ADDRESS", str(new).split("/")[0], flush=True)
                next_rotation += rotate
            await advertise()
        await device.stop_advertising()
        print("DONE", flush=True)


asyncio.run(main())
